import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { FIXTURE, newPipeline, searchMemory, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Issue 22, item 2: hostile record content, titles and metadata render as text everywhere. A
 * ChatGPT export whose titles, messages and metadata carry `<img onerror>`, `<script>`, SVG
 * handlers and `javascript:` links is imported and run; the explorer, the records list, record
 * detail, the lineage graph, the canvas preview and the eval tables are visited in Chromium, and
 * nothing runs: no dialog, no global set by a payload, no live element made from one.
 */
const stamp = Date.now();
const IMG = `<img src=x onerror="window.__xss=(window.__xss||0)+1;alert('xss-img')">`;
const SCRIPT = `<script>window.__xss=(window.__xss||0)+1;alert('xss-script')</script>`;
const SVG = `<svg onload="window.__xss=1;alert('xss-svg')"></svg>`;
const MD_LINK = `[open the key box](javascript:window.__xss=1;alert('xss-md'))`;
const A_LINK = `<a href="javascript:window.__xss=1;alert('xss-a')">cabin map</a>`;
const ALL = `${IMG} ${SCRIPT} ${SVG} ${MD_LINK} ${A_LINK}`;

/** The e2e fixture with every title, message and metadata field an importer keeps made hostile. */
function hostileExport(dir: string): string {
  const conversations = JSON.parse(readFileSync(FIXTURE, "utf8")) as Array<Record<string, unknown> & { mapping: Record<string, { message: null | { content: { parts: string[] }; author: { name: string | null } } }> }>;
  for (const c of conversations) {
    c.title = `${IMG}${String(c.title)}${SCRIPT}`;
    c.default_model_slug = SVG;
    for (const node of Object.values(c.mapping)) {
      if (!node.message) continue;
      node.message.content.parts = node.message.content.parts.map((p) => `${p} ${ALL}`);
      node.message.author.name = A_LINK;
    }
  }
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "hostile-export.json");
  writeFileSync(file, JSON.stringify(conversations));
  return file;
}

/** Nothing a payload would do has happened on this page. */
async function expectInert(page: Page, dialogs: string[], where: string) {
  await page.waitForTimeout(300); // onerror/onload fire asynchronously
  expect(dialogs, `${where}: a dialog opened`).toEqual([]);
  expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), `${where}: a payload ran`).toBeUndefined();
  const live = await page.evaluate(() => ({
    jsLinks: [...document.querySelectorAll("a[href]")].filter((a) => /^\s*javascript:/i.test(a.getAttribute("href") ?? "")).length,
    imgX: document.querySelectorAll('img[src="x"]').length,
    handlers: [...document.querySelectorAll("*")].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name) && /__xss/.test(a.value))).length,
    scripts: [...document.querySelectorAll("script")].filter((s) => (s.textContent ?? "").includes("__xss")).length,
  }));
  expect(live, `${where}: elements made from payloads`).toEqual({ jsLinks: 0, imgX: 0, handlers: 0, scripts: 0 });
}

test("hostile content, titles and metadata render as text in every view, and nothing runs", async ({ page }, info) => {
  test.setTimeout(600_000);
  const dialogs: string[] = [];
  page.on("dialog", async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
  const shot = (name: string) => page.screenshot({ path: info.outputPath(name), fullPage: true });
  const slug = await signUp(page, { email: `hostile-${stamp}@example.com`, password: "hostile-password-1" });
  const overview = await newPipeline(page, slug, "hostile");
  await uploadToSource(page, "chats", hostileExport(info.outputPath("input")), "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await expectInert(page, dialogs, "run page");

  // Explorer: search hits, a record's content and its sources show the markup as text.
  await page.goto(`${overview}/explore?branch=main`);
  await searchMemory(page, "lighthouse key", "button");
  await expect(page.getByTestId("search-result").first()).toBeVisible();
  await expect(page.getByTestId("search-result").first()).toContainText("onerror");
  await page.getByTestId("search-result").first().click();
  await page.getByTestId("source-item").first().click();
  await expect(page.getByTestId("record-content")).toContainText(`<script>window.__xss`);
  await expect(page.getByTestId("record-content")).toContainText("javascript:window.__xss=1;alert('xss-md')");
  await expectInert(page, dialogs, "explorer");
  await shot("01-explorer.png");

  // A question set whose question is hostile, for the eval tables.
  await page.getByTestId("add-to-question-set").click();
  const dialog = page.getByTestId("question-set-dialog");
  await dialog.getByTestId("question-set-name").fill("hostile-questions");
  await dialog.getByTestId("question-set-question").fill(`Where is the key? ${IMG} ${SCRIPT}`);
  await dialog.getByTestId("question-set-answer").fill(A_LINK);
  await dialog.getByTestId("question-set-save").click();
  await expect(page.getByText("Added to hostile-questions (1 question).")).toBeVisible();
  await expectInert(page, dialogs, "question set dialog");

  // Records list and record detail (titles from metadata, content, provenance, the lineage graph).
  await page.goto(`${overview}/records?branch=main`);
  await expect(page.getByTestId("records-table")).toBeVisible();
  await expect(page.getByTestId("records-table")).toContainText("onerror");
  await expectInert(page, dialogs, "records list");
  await page.getByTestId("records-step").selectOption("summaries");
  await expect(page.getByTestId("records-table")).toContainText("onerror");
  // The hostile title makes a long link: follow its address (a click can land on the overflowing neighbour cell).
  const href = await page.getByTestId("record-row").first().getByRole("link").getAttribute("href");
  expect(href).toMatch(/\/records\//);
  await page.goto(href!);
  await expect(page).toHaveURL(/\/records\/[^/?]+/);
  await expect(page.getByTestId("record-content").first()).toContainText("onerror", { timeout: 20_000 });
  // The lineage graph: its record nodes show a preview of their content (the transcript this summary came from).
  await expect(page.getByTestId("lineage-graph")).toBeVisible();
  await expect(page.getByTestId("lineage-graph")).toContainText("onerror");
  await page.getByTestId("lineage-node-transcripts").first().click();
  await expectInert(page, dialogs, "record detail and lineage graph");
  await shot("02-record-detail-lineage.png");

  // Canvas: the live prompt preview renders the sample record (pasted hostile content) into the template.
  await page.goto(`${overview}/canvas`);
  await page.getByTestId("canvas-node-summaries").click();
  await page.getByText("Sample input record (edit to try the template)").click();
  await page.getByTestId("sample-input").fill(ALL);
  await expect(page.getByTestId("template-preview")).toContainText(`<script>window.__xss`, { timeout: 20_000 });
  await expect(page.getByTestId("template-preview")).toContainText("onerror");
  await expectInert(page, dialogs, "canvas preview");
  await shot("03-canvas-preview.png");

  // Evals: two runs on the hostile question set; the runs table, the comparison's question table and a case.
  await page.goto(`${overview}/evals?branch=main`);
  for (const done of [1, 2]) {
    await page.getByTestId("eval-dataset").selectOption({ label: "question set · hostile-questions (1 question)" });
    await page.getByTestId("eval-mode").selectOption("fts");
    await page.getByTestId("run-eval").click();
    await expect(page.locator('[data-testid="eval-run-row"][data-status="completed"]')).toHaveCount(done, { timeout: 120_000 });
  }
  await expectInert(page, dialogs, "eval runs table");
  const rows = page.getByTestId("eval-run-row");
  await rows.nth(0).getByRole("checkbox").check();
  await rows.nth(1).getByRole("checkbox").check();
  await page.getByTestId("compare-selected").click();
  const questions = page.getByTestId("question-table");
  await expect(questions).toContainText("<script>window.__xss", { timeout: 30_000 });
  await expectInert(page, dialogs, "eval question table");
  await page.getByTestId("question-row").first().click();
  await expectInert(page, dialogs, "eval case");
  await shot("04-eval-tables.png");
});
