import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";

/**
 * Evals in a real browser: a pipeline with two branches, a LoCoMo-shaped file uploaded on the
 * Evals tab, evals run from the UI (with the BM25 baseline template beside them), the compare
 * view of the two branches with its charts (asserted on the rendered SVG), a regressed question
 * opened down to the lineage of what it retrieved, and the workspace Compare page.
 */
const stamp = Date.now();
const user = { email: `evals-${stamp}@example.com`, password: "evals-password-1" };
const dir = mkdtempSync(path.join(tmpdir(), "synthex-e2e-evals-"));
const FILE = path.join(dir, "tiny-locomo.json");
writeFileSync(FILE, JSON.stringify(locomoFixture()));

async function trpc<T>(page: Page, proc: string, input: unknown, kind: "query" | "mutation" = "query"): Promise<T> {
  return page.evaluate(
    async ({ proc, input, kind }) => {
      const res =
        kind === "query"
          ? await fetch(`/api/trpc/${proc}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`)
          : await fetch(`/api/trpc/${proc}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) });
      const body = await res.json();
      if (!res.ok) throw new Error(`${proc}: ${JSON.stringify(body)}`);
      return body.result.data.json;
    },
    { proc, input, kind },
  ) as Promise<T>;
}

/** Windows for turn-level evidence, a one-sentence extractive gist per session (loses most turns). */
const SPEC = {
  version: 1,
  sources: [{ name: "chats", format: "json" }],
  steps: [
    { type: "split", name: "windows", from: "chats", operator: { kind: "windows", radius: 1 } },
    { type: "transform", name: "gist", from: "chats", operator: { kind: "extractive-summary", sentences: 1 } },
  ],
  outputs: [{ name: "search", surface: "search", from: ["windows", "gist"] }],
};

async function waitForRows(page: Page, completed: number) {
  await expect(page.locator('[data-testid="eval-run-row"][data-status="completed"]')).toHaveCount(completed, { timeout: 240_000 });
}

async function runFromForm(page: Page, opts: { branch: string; mode: string; step: string; baseline?: string }) {
  await page.getByTestId("eval-branch").selectOption(opts.branch);
  await page.getByTestId("eval-mode").selectOption(opts.mode);
  await page.getByTestId("eval-step").selectOption(opts.step);
  const box = opts.baseline ? page.getByTestId(`baseline-${opts.baseline}`) : null;
  if (box) await box.check();
  await page.getByTestId("run-eval").click();
  if (box) await box.uncheck();
}

test("run evals from the UI, compare two branches, open a regressed question's lineage", async ({ page }, info) => {
  test.setTimeout(600_000);
  const shot = (name: string) => page.screenshot({ path: info.outputPath(name), fullPage: true }).then((b) => info.attach(name, { body: b, contentType: "image/png" }));

  await page.goto("/signup");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/w\/[^/]+\/pipelines$/);
  const slug = page.url().split("/w/")[1]!.split("/")[0]!;
  const workspaces = await trpc<Array<{ id: string; slug: string }>>(page, "workspace.list", undefined);
  const workspaceId = workspaces.find((w) => w.slug === slug)!.id;
  // Setup: the pipeline and its second branch (what is under test is the Evals UI).
  const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "memory-e2e", spec: SPEC }, "mutation");
  await trpc(page, "pipeline.createBranch", { workspaceId, pipelineId: created.pipeline.id, name: "gist" }, "mutation");

  await page.goto(`/w/${slug}/pipelines/${created.pipeline.id}?branch=main`);
  await page.getByTestId("tab-evals").click();
  await expect(page).toHaveURL(/\/evals\?branch=main$/);
  await expect(page.getByText("No evals yet")).toBeVisible();

  await page.getByTestId("eval-upload").setInputFiles(FILE);
  await expect(page.getByTestId("eval-dataset")).toContainText("tiny-locomo.json (9 questions)");
  await expect(page.getByText(/2 conversations, 9 questions \(3 skipped, 2 repaired\)/)).toBeVisible();

  // main: BM25 over turn windows, with the bm25-sessions baseline template beside it.
  await runFromForm(page, { branch: "main", mode: "bm25", step: "windows", baseline: "bm25-sessions" });
  await waitForRows(page, 2);
  // gist: the same benchmark searched at the one-sentence gist altitude.
  await runFromForm(page, { branch: "gist", mode: "bm25", step: "gist" });
  await waitForRows(page, 3);
  await expect(page.locator('[data-testid="eval-run-row"][data-label="memory-e2e@main"]')).toContainText("bm25 @ windows");
  // The history line chart: one dot per completed run (three series of one run each).
  await expect(page.getByTestId("chart-history").locator("svg.recharts-surface[role=application]")).toBeVisible();
  await expect(page.getByTestId("chart-history").locator(".recharts-line-dot")).toHaveCount(3);
  await shot("evals-01-runs.png");

  await page.getByLabel("Select memory-e2e@main").check();
  await page.getByLabel("Select memory-e2e@gist").check();
  await page.getByTestId("compare-selected").click();
  await expect(page).toHaveURL(/\/evals\/compare\?/);
  const view = page.getByTestId("compare-view");
  await expect(view).toBeVisible();
  await expect(page.getByTestId("metric-card-session_hit@5")).toContainText("memory-e2e@gist");
  // Charts rendered as SVG: bars per metric and category, one scatter point per run, stacked cost bars.
  await expect(page.getByTestId("chart-metrics").locator(".recharts-bar-rectangle path, path.recharts-rectangle").first()).toBeVisible();
  expect(await page.getByTestId("chart-metrics").locator("path.recharts-rectangle").count()).toBeGreaterThanOrEqual(2);
  expect(await page.getByTestId("chart-categories").locator("path.recharts-rectangle").count()).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId("chart-scatter").locator(".recharts-scatter-symbol")).toHaveCount(2);
  await expect(page.getByTestId("chart-cost-plan").locator("svg.recharts-surface[role=application]")).toBeVisible();
  await shot("evals-02-compare.png");

  // Regressions come first; open one and follow a retrieved record to its source session.
  const first = page.getByTestId("question-row").first();
  await expect(first).toHaveAttribute("data-status", "regressed");
  await first.click();
  const dialog = page.getByTestId("question-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("question-run")).toHaveCount(2);
  await dialog.getByTestId("retrieved-record").first().click();
  await expect(dialog.getByTestId("case-lineage")).toBeVisible();
  await expect(dialog.getByTestId("lineage-step-chats").first()).toBeVisible();
  await shot("evals-03-regressed-question-lineage.png");
  await page.keyboard.press("Escape");

  // The workspace Compare page: every architecture on the benchmark in one screen.
  await page.getByRole("link", { name: "Compare", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${slug}/compare$`));
  await expect(page.getByTestId("compare-view")).toBeVisible();
  await expect(page.getByTestId("chart-scatter").locator(".recharts-scatter-symbol")).toHaveCount(3);
  await shot("evals-04-workspace-compare.png");
});
