import { mkdirSync } from "node:fs";
import path from "node:path";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";
import { TWO_ALTITUDE_SPEC as SPEC } from "../server/eval/testing/two-altitude-spec";
import { SCREENSHOT_DIR, signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * Issue 31, charts and question by question, at 1024, 1280 and 1440 px: three runs of the tiny
 * LoCoMo file (turn windows on main, a one-sentence gist on a branch that loses most turns, the
 * bm25-sessions template) on a pipeline's compare page. The charts render with tick labels that
 * never overlap and stay inside their chart; the question counts add up; a regressed question
 * opens with every run's hits side by side on screen, the gold evidence marked and each hit a
 * link to its record page. A screenshot per width goes to SCREENSHOT_DIR (e2e/helpers.ts).
 */
const stamp = Date.now();
const MEASURE = SCREENSHOT_DIR;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const overlaps = (a: Box, b: Box) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;

/** Every tick label of each axis of a chart: none overlaps another of its axis, all inside the chart's box. */
async function expectReadableTicks(chart: Locator, name: string) {
  const frame = (await chart.boundingBox())!;
  for (const axis of ["xAxis", "yAxis"]) {
    const ticks = chart.locator(`.recharts-${axis}-tick-labels .recharts-cartesian-axis-tick-value`);
    const count = await ticks.count();
    expect(count, `${name} ${axis} has tick labels`).toBeGreaterThan(1);
    const boxes: Array<Box & { text: string }> = [];
    for (let i = 0; i < count; i++) {
      const box = (await ticks.nth(i).boundingBox())!;
      boxes.push({ ...box, text: (await ticks.nth(i).textContent()) ?? "" });
    }
    for (const b of boxes) {
      expect(b.text.trim(), `${name} ${axis} tick has text`).not.toBe("");
      expect(b.x >= frame.x - 1 && b.x + b.width <= frame.x + frame.width + 1, `${name} ${axis} tick "${b.text}" inside the chart`).toBe(true);
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        expect(overlaps(boxes[i]!, boxes[j]!), `${name} ${axis} ticks "${boxes[i]!.text}" and "${boxes[j]!.text}" overlap`).toBe(false);
      }
    }
  }
}

/** No element of `cells` hides text (content wider than its box). */
async function expectNotClipped(cells: Locator, what: string) {
  const clipped = await cells.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
  expect(clipped, `${what} clipped`).toEqual([]);
}

async function waitForCompleted(page: Page, workspaceId: string, pipelineId: string, n: number) {
  await expect
    .poll(async () => {
      const runs = await trpc<Array<{ status: string; error: string | null }>>(page, "evals.list", { workspaceId, pipelineId, withTemplates: true });
      const failed = runs.find((r) => r.status === "failed");
      if (failed) throw new Error(`an eval failed: ${failed.error}`);
      return runs.filter((r) => r.status === "completed").length;
    }, { timeout: 240_000, intervals: [1000] })
    .toBe(n);
}

test("compare charts are legible and a regressed question drills down to marked evidence and record pages at 1024, 1280, 1440 px", async ({ page }, info) => {
  test.setTimeout(600_000);
  mkdirSync(MEASURE, { recursive: true });
  const slug = await signUp(page, { email: `drilldown-${stamp}@example.com`, password: "drilldown-password-1" });
  const workspaceId = await workspaceIdOf(page, slug);
  // Setup through the API (the Evals tab that starts these is covered by evals.spec.ts).
  const { pipeline } = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "drill-memory", spec: SPEC }, "mutation");
  await trpc(page, "branch.create", { workspaceId, pipelineId: pipeline.id, name: "gist" }, "mutation");
  const dataset = await trpc<{ id: string }>(page, "evals.importDataset", { workspaceId, benchmark: "locomo", text: JSON.stringify(locomoFixture()), name: "tiny-locomo.json" }, "mutation");
  const start = (input: Record<string, unknown>) => trpc<{ id: string }>(page, "evals.start", { workspaceId, datasetId: dataset.id, ...input }, "mutation");
  const main = await start({ pipelineId: pipeline.id, branch: "main", mode: "bm25", step: "windows" });
  await waitForCompleted(page, workspaceId, pipeline.id, 1);
  const gist = await start({ pipelineId: pipeline.id, branch: "gist", mode: "bm25", step: "gist" });
  const sessions = await start({ template: "bm25-sessions" });
  await waitForCompleted(page, workspaceId, pipeline.id, 3);
  const url = `/w/${slug}/pipelines/${pipeline.id}/evals/compare?branch=main&baseline=${main.id}&others=${gist.id},${sessions.id}`;
  const labels = ["drill-memory@main", "drill-memory@gist", "template: bm25-sessions"];

  for (const width of [1024, 1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(url);
    const charts = page.getByTestId("compare-charts");
    await expect(charts).toBeVisible({ timeout: 30_000 });

    // Pareto: one entry per run, each on the frontier or dominated by a named run.
    const pareto = page.getByTestId("chart-pareto");
    await expect(pareto.locator("svg.recharts-surface")).toBeVisible();
    await expect(page.getByTestId("pareto-run")).toHaveCount(3);
    for (const entry of await page.getByTestId("pareto-run").all()) {
      await expect(entry).toContainText(/on the frontier|dominated by (drill-memory@|template: )/);
    }
    await expectReadableTicks(pareto, `pareto @${width}`);

    // Per-category heatmap: a row per run, the baseline's values, the others' deltas; nothing clipped.
    await expect(page.getByTestId("heatmap-row")).toHaveCount(3);
    await expect(page.getByTestId("heatmap-row").first()).toContainText("baseline");
    await expectNotClipped(page.getByTestId("heatmap-cell"), `heatmap cells @${width}`);
    await expectNotClipped(page.getByTestId("heatmap-category"), `heatmap headers @${width}`);

    // History: a line per branch and the template, readable ticks.
    const history = page.getByTestId("chart-branch-history");
    await expect(history.locator(".recharts-line-dot")).toHaveCount(3);
    await expectReadableTicks(history, `history @${width}`);

    // Cost per step: a row per run with its steps named; nothing clipped.
    await expect(page.getByTestId("cost-row")).toHaveCount(3);
    await expectNotClipped(page.getByTestId("cost-per-step").locator("td, th"), `cost table @${width}`);
    // The same colour for a run in the Pareto legend, the heatmap and the cost table.
    const dot = (row: Locator) => row.locator("span[aria-hidden]").first().evaluate((e) => getComputedStyle(e).borderColor);
    for (let i = 0; i < 3; i++) {
      const c = await dot(page.getByTestId("heatmap-row").nth(i));
      expect(await dot(page.getByTestId("cost-row").nth(i))).toBe(c);
    }
    await charts.screenshot({ path: path.join(MEASURE, `compare-charts-${width}.png`) });

    // Question by question: main against the gist branch, right when recall@2k ≥ 0.5.
    const questions = page.getByTestId("question-compare");
    await questions.getByTestId("question-against").selectOption({ label: "drill-memory@gist" });
    await questions.getByLabel("Question metric").selectOption("evidence_recall@2k");
    const counts = page.getByTestId("question-counts");
    await expect(counts).toHaveAttribute("data-metric", "evidence_recall@2k");
    await expect(counts).toHaveAttribute("data-other", gist.id);
    await expect(counts).toHaveAttribute("aria-busy", "false");
    await expect(page.getByTestId("outcome-filter-regressed")).not.toHaveAttribute("data-count", "0");
    const total = Number(await counts.getAttribute("data-total"));
    expect(total).toBe(9);
    let sum = 0;
    for (const k of ["regressed", "improved", "both_wrong", "both_right"]) sum += Number(await page.getByTestId(`outcome-filter-${k}`).getAttribute("data-count"));
    expect(sum, "the outcome counts add up to the questions").toBe(total);
    await page.getByTestId("outcome-filter-regressed").click();
    const regressed = Number(await page.getByTestId("outcome-filter-regressed").getAttribute("data-count"));
    await expect(page.getByTestId("question-row")).toHaveCount(regressed);
    await expect(page.locator('[data-testid="question-row"]:not([data-outcome="regressed"])')).toHaveCount(0);
    // The question text wraps inside its column: it never runs into the category beside it.
    const first = page.getByTestId("question-row").first();
    const text = (await first.getByTestId("question-open").boundingBox())!;
    const category = (await first.getByTestId("question-category").boundingBox())!;
    expect(text.x + text.width, "question text stays left of the category").toBeLessThanOrEqual(category.x + 0.5);
    await expectNotClipped(page.getByTestId("question-table").locator("td, th"), `question table @${width}`);
    await expect(page.getByTestId("question-table").locator("xpath=..")).toHaveJSProperty("scrollLeft", 0);
    expect(await page.getByTestId("question-table").evaluate((t) => t.parentElement!.scrollWidth <= t.parentElement!.clientWidth + 1)).toBe(true);

    await questions.screenshot({ path: path.join(MEASURE, `compare-questions-${width}.png`) });

    // The drill-down: every run's column on screen, the gold evidence named and the evidence hits marked.
    await first.click();
    const drill = page.getByTestId("question-drilldown");
    await expect(drill.getByTestId("drilldown-run")).toHaveCount(3);
    await expect(drill.getByTestId("gold-evidence-id").first()).toBeVisible();
    const runsShown = await drill.getByTestId("drilldown-run").allInnerTexts();
    labels.forEach((l, i) => expect(runsShown[i]).toContain(l));
    for (const col of await drill.getByTestId("drilldown-run").all()) {
      const box = (await col.boundingBox())!;
      expect(box.x, `a run's column starts on screen @${width}`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `a run's column ends on screen @${width}`).toBeLessThanOrEqual(width);
    }
    // Regressed: main (the baseline) found the evidence in its top hits; its hit is marked and names the gold turn.
    const mainColumn = drill.locator(`[data-testid="drilldown-run"][data-run-id="${main.id}"]`);
    const evidenceHit = mainColumn.locator('[data-testid="drilldown-hit"][data-evidence="true"]').first();
    await expect(evidenceHit).toBeVisible();
    const gold = await drill.getByTestId("gold-evidence-id").allInnerTexts();
    const named = (await evidenceHit.getByTestId("hit-evidence").innerText()).replace(/^evidence\s+/, "").split(", ");
    expect(named.every((t) => gold.includes(t)), `hit evidence ${named} is gold ${gold}`).toBe(true);
    // Highlighted: a thicker border of another colour than a hit off the evidence.
    const style = (l: Locator) => l.evaluate((e) => ({ width: getComputedStyle(e).borderTopWidth, color: getComputedStyle(e).borderTopColor, background: getComputedStyle(e).backgroundColor }));
    const marked = await style(evidenceHit);
    const plainHit = drill.locator('[data-testid="drilldown-hit"][data-evidence="false"]').first();
    await expect(plainHit).toBeVisible();
    const plain = await style(plainHit);
    expect(marked.width).toBe("2px");
    expect(plain.width).toBe("1px");
    expect(marked.color).not.toBe(plain.color);
    expect(marked.background).not.toBe(plain.background);
    for (const hit of await drill.getByTestId("drilldown-hit").all()) {
      await expect(hit).toHaveAttribute("href", new RegExp(`^/w/${slug}/pipelines/[^/]+/records/[^/?]+\\?branch=`));
    }
    await page.screenshot({ path: path.join(MEASURE, `compare-drilldown-${width}.png`), fullPage: false });
    await info.attach(`compare-drilldown-${width}.png`, { path: path.join(MEASURE, `compare-drilldown-${width}.png`), contentType: "image/png" });

    if (width === 1440) {
      // The evidence hit opens its record page: the record's own content, with the hit's text.
      const preview = (await evidenceHit.getByTestId("hit-preview").innerText()).split("\n")[0]!.slice(0, 30);
      await evidenceHit.click();
      await expect(page).toHaveURL(/\/records\/[^/?]+\?branch=main$/);
      await expect(page.getByTestId("record-content")).toContainText(preview);
    } else {
      await page.keyboard.press("Escape");
      await expect(drill).toBeHidden();
    }
  }
});
