/**
 * A Vitest reporter for `npm test`'s closing line (scripts/test-all.ts): writes the skipped tests,
 * each with why (the note of `ctx.skip(note)`), and the tests that passed only on a retry, to the
 * JSON file named by VITEST_OUTCOMES_FILE. A skip without a note is listed as "no reason given".
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestCase, TestModule } from "vitest/node";

export interface TestOutcomes {
  skipped: Array<{ name: string; reason: string }>;
  flaky: Array<{ name: string; retries: number }>;
}

function label(test: TestCase) {
  return `${path.relative(process.cwd(), test.module.moduleId)} › ${test.fullName}`;
}

export default class OutcomesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const file = process.env.VITEST_OUTCOMES_FILE;
    if (!file) return;
    const outcomes: TestOutcomes = { skipped: [], flaky: [] };
    for (const testModule of modules) {
      for (const test of testModule.children.allTests()) {
        const result = test.result();
        if (result.state === "skipped" && test.options.mode !== "todo") {
          outcomes.skipped.push({ name: label(test), reason: result.note ?? "no reason given" });
        } else if (result.state === "passed" && (test.diagnostic()?.retryCount ?? 0) > 0) {
          outcomes.flaky.push({ name: label(test), retries: test.diagnostic()!.retryCount });
        }
      }
    }
    writeFileSync(file, JSON.stringify(outcomes, null, 2));
  }
}
