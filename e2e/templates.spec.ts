/**
 * Every template the gallery lists (read from the page, so templates added later are covered):
 * create a pipeline from it through "New pipeline" and open its canvas, which draws every node
 * the gallery card names and reports no problems. Then the Compare page: several templates scored
 * on one uploaded benchmark, side by side with their cost.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";
import { signUp } from "./helpers";

test.use({ viewport: { width: 1600, height: 1000 } });

const stamp = Date.now();

test("create each gallery template and open its canvas", async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, { email: `gallery-${stamp}@example.com`, password: "gallery-password-1" });
  await page.goto(`/w/${slug}/pipelines/new`);
  const cards = page.getByRole("radiogroup", { name: "Template" }).getByRole("radio");
  await expect(cards.first()).toBeVisible();
  const ids = (await cards.evaluateAll((els) => els.map((e) => e.getAttribute("data-testid") ?? ""))).map((id) => id.replace(/^template-/, ""));
  // The baselines and the seed architectures are all offered.
  expect(ids).toEqual(expect.arrayContaining(["chat-memory", "rag-baseline", "bm25-sessions", "bm25-windows", "blank"]));

  for (const id of ids) {
    await page.goto(`/w/${slug}/pipelines/new`);
    const card = page.getByTestId(`template-${id}`);
    await card.click();
    await expect(card).toHaveAttribute("aria-checked", "true");
    // The template's own source format is preselected (issue 48: Documents kept "ChatGPT export").
    if (id === "documents") await expect(page.getByTestId("source-format")).toContainText("Folder");
    const nodes = ((await card.getByTestId("template-nodes").getAttribute("data-nodes")) ?? "").split(" ").filter(Boolean);
    expect(nodes.length, `${id} names its nodes`).toBeGreaterThan(0);
    await page.getByLabel("Name").fill(`from-${id}`);
    await page.getByTestId("create-pipeline-submit").click();
    await page.waitForURL(new RegExp(`/w/${slug}/pipelines/(?!new)[^/]+$`));
    const pipelineId = new URL(page.url()).pathname.split("/")[4]!;

    await page.goto(`/w/${slug}/pipelines/${pipelineId}/canvas`);
    for (const name of nodes) await expect(page.getByTestId(`canvas-node-${name}`), `${id}: node ${name}`).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId("problems-panel")).toContainText("No problems");
    await page.screenshot({ path: testInfo.outputPath(`canvas-${id}.png`) });
  }
});

test("score several templates on one benchmark from the Compare page and see them side by side with cost", async ({ page }, testInfo) => {
  test.setTimeout(420_000);
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-e2e-templates-"));
  const file = path.join(dir, "tiny-locomo.json");
  writeFileSync(file, JSON.stringify(locomoFixture()));
  const slug = await signUp(page, { email: `compare-${stamp}@example.com`, password: "compare-password-1" });
  await page.goto(`/w/${slug}/compare`);
  await expect(page.getByRole("heading", { name: "No completed evals yet" })).toBeVisible();
  await page.getByTestId("score-upload").setInputFiles(file);
  await expect(page.getByTestId("score-dataset")).toContainText("tiny-locomo.json");
  const picked = ["bm25-sessions", "synapse", "pyramid"];
  for (const t of picked) await page.getByTestId(`score-template-${t}`).check();
  await page.getByTestId("score-run").click();
  const view = page.getByTestId("compare-view");
  await expect(view).toBeVisible({ timeout: 300_000 });
  // The comparison fills in as each finishes: all three, with the build cost of each.
  for (const t of picked) await expect(view.getByText(`template: ${t}`).first()).toBeVisible({ timeout: 300_000 });
  const pyramidCost = view.getByTestId("cost-row").filter({ hasText: "template: pyramid" });
  await expect(pyramidCost).toContainText("$0");
  await expect(pyramidCost.getByTestId("cost-step").first()).toBeVisible();
  await expect(view.getByTestId("metric-card-session_hit@5")).toContainText("template: synapse");
  await page.screenshot({ path: testInfo.outputPath("compare-templates.png"), fullPage: true });
});
