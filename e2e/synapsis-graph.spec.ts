/**
 * The entity graph in a real browser, on the LoCoMo dev split (read at test time from
 * ../shared/data/locomo-dev, never copied into the repository): a pipeline from the synapsis
 * template, one LoCoMo conversation (conv-26: Caroline and Melanie, 19 dated sessions) uploaded as
 * dated transcripts through the source's upload box, one offline run; then the explorer's Graph
 * view: a speaker's neighbourhood drawn by React Flow (nodes and edges), a neighbour expanded on
 * click, the speaker's belief timeline, a belief opened down to the turn it was read from, and the
 * insights list.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { parseLocomo } from "../server/eval/locomo";
import { signUp, waitForRun } from "./helpers";

const LOCOMO_DEV = path.join(import.meta.dirname, "../../shared/data/locomo-dev/locomo-dev.json");
const stamp = Date.now();

test.use({ viewport: { width: 1600, height: 1000 } });

/** One markdown transcript per session of conv-26, dated by front matter: what a person would export and upload. */
function conversationFiles(): string[] {
  const { dataset } = parseLocomo(readFileSync(LOCOMO_DEV, "utf8"), "locomo-dev.json");
  const sample = dataset.samples.find((s) => s.id === "conv-26")!;
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-e2e-graph-"));
  return sample.sessions.map((session) => {
    const file = path.join(dir, `conv-26-session-${String(session.id).padStart(2, "0")}.md`);
    const body = session.turns.map((t) => `${t.speaker}: ${t.text.replace(/\n+/g, " ")}`).join("\n\n");
    writeFileSync(file, `---\ntitle: conv-26 session ${session.id}\ndate: ${session.time}\n---\n\n${body}\n`);
    return file;
  });
}

test("the entity graph and belief timeline of a LoCoMo speaker, each belief opening its sources", async ({ page }, info) => {
  test.skip(!existsSync(LOCOMO_DEV), `the LoCoMo dev split is not at ${LOCOMO_DEV}`);
  test.setTimeout(420_000);
  const shot = (name: string) => page.screenshot({ path: info.outputPath(name), fullPage: true }).then((b) => info.attach(name, { body: b, contentType: "image/png" }));
  const files = conversationFiles();
  expect(files).toHaveLength(19);

  const slug = await signUp(page, { email: `graph-${stamp}@example.com`, password: "graph-password-1" });
  await page.goto(`/w/${slug}/pipelines/new`);
  await page.getByTestId("template-synapsis").click();
  await page.getByLabel("Name").fill("locomo-graph");
  await page.getByTestId("source-format").click();
  await page.getByRole("option", { name: /markdown/i }).click();
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  const overview = new URL(page.url()).pathname;

  await page.getByTestId("upload-sessions").locator('input[type="file"]').setInputFiles(files);
  await expect(page.getByTestId("upload-report-sessions")).toHaveCount(19, { timeout: 120_000 });
  await expect(page.getByTestId("upload-added")).toHaveText(Array(19).fill("1"));
  await expect(page.getByTestId("run-button")).toHaveText(/^Run$/);
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // The explorer offers the Graph view because the pipeline has an entities step.
  await page.goto(`${overview}/explore?branch=main`);
  await page.getByTestId("open-graph").click();
  await expect(page).toHaveURL(/\/explore\/graph\?branch=main/);
  await expect(page.getByTestId("entity-option").first()).toBeVisible({ timeout: 30_000 });
  await page.getByTestId("entity-search").fill("carol");
  const caroline = page.locator('[data-testid="entity-option"][data-name="Caroline"]');
  await expect(caroline).toBeVisible();
  await caroline.click();
  await expect(page).toHaveURL(/entity=ent_/);

  // React Flow draws the neighbourhood: Caroline in the centre, Melanie among the neighbours, edges between them.
  const canvas = page.getByTestId("graph-canvas");
  await expect(canvas.locator(".react-flow__node").first()).toBeVisible({ timeout: 30_000 });
  await expect(canvas.locator('[data-testid="graph-entity-node"][data-name="Caroline"]')).toBeVisible();
  await expect(canvas.locator('[data-testid="graph-entity-node"][data-name="Melanie"]')).toBeVisible();
  expect(await canvas.locator(".react-flow__node").count()).toBeGreaterThanOrEqual(3);
  expect(await canvas.locator(".react-flow__edge").count()).toBeGreaterThanOrEqual(2);
  await expect(canvas.locator(".react-flow__edge-text").first()).toBeVisible();
  await shot("graph-01-neighbourhood.png");

  // Clicking a neighbour expands it: its own neighbours join the graph.
  const before = await canvas.locator(".react-flow__node").count();
  await canvas.locator('[data-testid="graph-entity-node"][data-name="Melanie"]').click();
  await expect(canvas.locator('[data-testid="graph-entity-node"][data-name="Melanie"]')).toHaveAttribute("data-expanded", "1");
  await expect.poll(() => canvas.locator(".react-flow__node").count(), { timeout: 15_000 }).toBeGreaterThan(before);

  // The belief timeline: oldest valid time first, each with its validity interval and status.
  const timeline = page.getByTestId("belief-timeline");
  await expect(timeline).toBeVisible();
  const beliefs = timeline.getByTestId("timeline-belief");
  expect(await beliefs.count()).toBeGreaterThanOrEqual(3);
  const starts = (await timeline.getByTestId("belief-validity").allTextContents()).map((t) => t.split(" → ")[0]!);
  expect(starts).toEqual([...starts].sort());
  expect(starts[0]).toMatch(/^2023-\d\d-\d\d$/);
  await shot("graph-02-timeline.png");

  // A belief opens its sources: the LoCoMo turn it was read from, with a link to its lineage.
  await beliefs.first().click();
  const sources = page.getByTestId("belief-sources");
  await expect(sources).toBeVisible();
  await expect(sources.getByTestId("belief-text")).toContainText("Caroline");
  await expect(sources.getByTestId("belief-source").first()).toBeVisible();
  await expect(sources.getByTestId("belief-source-content").first()).toContainText(/Caroline:|Melanie:/);
  await shot("graph-03-belief-sources.png");
  await sources.getByTestId("open-source-record").first().click();
  await expect(page).toHaveURL(/\/records\/[^/?]+\?branch=main/);
  await expect(page.getByTestId("record-content")).toContainText(/Caroline|Melanie/);
  await page.goBack();

  // Insights: new connections, digests, contradictions; one opens its beliefs.
  await page.getByTestId("graph-panel-insights").click();
  const insights = page.getByTestId("insights-list");
  await expect(insights.getByTestId("insight").first()).toBeVisible({ timeout: 30_000 });
  await insights.getByTestId("insight-kind-digest").click();
  await expect(insights.getByTestId("insight").first()).toHaveAttribute("data-kind", "digest");
  await insights.getByTestId("insight").first().locator("button").first().click();
  await expect(insights.getByTestId("edge-belief").first()).toBeVisible();
  await insights.getByTestId("edge-belief").first().click();
  await expect(page.getByTestId("belief-sources").getByTestId("belief-source").first()).toBeVisible();
  await shot("graph-04-insights.png");
});
