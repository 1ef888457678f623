import path from "node:path";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { createApiKey, FIXTURE, SCREENSHOT_DIR, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Issue 50 in the browser: a pipeline on the mem0 template with its agents' queries logged → "Try
 * another architecture" (synapsis, bound to the same source, its plan) → run → a question set made
 * from the query log scored on both branches → the migration report (replay and question set) →
 * promote → the REST search answers from synapsis' records → restore the old architecture, and the
 * REST search and the Mem0 endpoint answer from mem0's memories again. Screenshots of the dialog and
 * the report at 1024 and 1440 px go to SCREENSHOT_DIR (migrate-ui-*.png).
 */
const stamp = Date.now();
const user = { email: `migrate-${stamp}@example.com`, password: "migrate-password-1" };
const PIPELINE = "migrate-memory";
const QUERIES = ["lighthouse key", "blue ceramic frog", "lighthouse key"];
const MEM0_STEPS = ["memories", "entities"];
const SYNAPSIS_STEPS = ["windows", "relations", "entities"];

async function shots(page: Page, name: string) {
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `migrate-ui-${name}-${width}.png`), fullPage: true });
  }
}

/** The steps the REST search answers "lighthouse key" from, with the agent's key. */
async function searchSteps(request: APIRequestContext, key: string) {
  const res = await request.get(`/api/v1/pipelines/${PIPELINE}/search?query=${encodeURIComponent("lighthouse key")}&mode=fts&limit=10`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status()).toBe(200);
  const hits = ((await res.json()) as { hits: Array<{ step: string }> }).hits;
  expect(hits.length).toBeGreaterThan(0);
  return new Set(hits.map((h) => h.step));
}

/** The Mem0 MemoryClient's search, as the client sends it (Token auth, the pipeline in the base URL). */
async function mem0Search(request: APIRequestContext, key: string) {
  return request.post(`/compat/mem0/p/${PIPELINE}/v3/memories/search/`, { headers: { authorization: `Token ${key}` }, data: { query: "lighthouse key", keyword_search: true } });
}

/** Scores the question set "from-traffic" on `branch` from the Evals tab and waits for it. */
async function scoreQuestionSet(page: Page, overview: string, branch: string) {
  await page.goto(`${overview}/evals?branch=${encodeURIComponent(branch)}`);
  await page.getByTestId("eval-dataset").selectOption({ label: "question set · from-traffic (1 question)" });
  await page.getByTestId("eval-branch").selectOption(branch);
  await page.getByTestId("run-eval").click();
  const row = page.locator(`[data-testid="eval-run-row"][data-label="${PIPELINE}@${branch}"]`);
  await expect(row).toHaveAttribute("data-status", "completed", { timeout: 240_000 });
}

test.use({ viewport: { width: 1440, height: 900 } });

test("migration: mem0 → try synapsis in the UI, plan, run, report on replay and a question set, promote, restore", async ({ page, request }) => {
  test.setTimeout(600_000);
  const slug = await signUp(page, user);

  // A pipeline on mem0 with a small chat history, built.
  await page.goto(`/w/${slug}/pipelines/new`);
  await page.getByTestId("template-mem0").click();
  await page.getByLabel("Name").fill(PIPELINE);
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  const overview = new URL(page.url()).pathname;
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // Agents' traffic: the query log on, searches over REST with a key, one labelled into a question set.
  const key = await createApiKey(page, slug, "migrate-agent");
  await page.goto(`${overview}/traffic?branch=main`);
  await expect(page.getByTestId("log-status")).toHaveText("off");
  await page.getByTestId("log-toggle").click();
  await expect(page.getByTestId("log-status")).toHaveText("on");
  for (const query of QUERIES) {
    const res = await request.get(`/api/v1/pipelines/${PIPELINE}/search?query=${encodeURIComponent(query)}&limit=5`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status()).toBe(200);
  }
  expect([...(await searchSteps(request, key))].every((s) => MEM0_STEPS.includes(s))).toBe(true);
  const mem0Before = await mem0Search(request, key);
  expect(mem0Before.status()).toBe(200);
  expect(((await mem0Before.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
  await page.reload();
  await expect(page.getByTestId("traffic-total")).toHaveText(/^\d+ queries$/, { timeout: 20_000 });
  const frog = page.getByTestId("logged-query").filter({ hasText: "blue ceramic frog" });
  await frog.getByTestId("label-first").first().click();
  await expect(page.getByText('Added to question set "from-traffic" (1 question): score it in Evals.')).toBeVisible();
  await scoreQuestionSet(page, overview, "main");

  // Try another architecture from the overview: synapsis, its source bound to the pipeline's chats by format.
  await page.goto(`${overview}?branch=main`);
  await page.getByTestId("try-architecture").click();
  const dialog = page.getByTestId("migration-dialog");
  await dialog.getByTestId("migration-template").selectOption("synapsis");
  await expect(dialog.getByTestId("migration-name")).toHaveValue("try-synapsis");
  await expect(dialog.getByTestId("bind-sessions")).toHaveValue("chats");
  await expect(dialog.getByTestId("binding-sessions")).toContainText("by format");
  await shots(page, "dialog-binding");
  await dialog.getByTestId("migration-create").click();
  // The plan: what the run computes (synapsis' steps), what it reuses (the raw chats), tokens and cost.
  await expect(dialog.getByTestId("migration-plan-summary")).toContainText("nothing imported again");
  await expect(dialog.getByTestId("migration-plan-summary")).toContainText("windows");
  await expect(dialog.getByTestId("migration-plan-totals")).toContainText("Reuses");
  await expect(dialog.getByTestId("migration-plan-totals")).toContainText("offline/extractive");
  await shots(page, "dialog-plan");
  await dialog.getByTestId("migration-run").click();
  await waitForRun(page);
  await expect(page).toHaveURL(/branch=try-synapsis/);

  // The same question set scored on the candidate; then the report from the Branches tab.
  await scoreQuestionSet(page, overview, "try-synapsis");
  await page.goto(`${overview}/branches?branch=main`);
  await page.getByTestId("report-try-synapsis").click();
  await expect(page).toHaveURL(/\/branches\/report\?branch=try-synapsis/);
  await page.getByTestId("run-report").click();
  const report = page.getByTestId("migration-report");
  await expect(report).toBeVisible({ timeout: 120_000 });
  await expect(report.getByTestId("report-metric-question-set-session_hit@5")).toBeVisible();
  await expect(report.getByTestId("report-metric-replay-overlap@k")).toBeVisible();
  await expect(report.getByTestId("report-metric-replay-latency_ms")).toContainText("[");
  await expect(report.getByTestId("replay-summary")).toContainText("replayed");
  await expect(report.getByTestId("report-cost")).toContainText("Full build");
  await expect(report.getByTestId("report-latency")).toContainText("ms");
  await expect(report.getByTestId("report-notes")).toContainText("Shadow traffic: not measured");
  await shots(page, "report");

  // Promote: main is kept as previous/try-synapsis; the REST search now answers from synapsis' records.
  page.once("dialog", (d) => void d.accept());
  await page.getByTestId("migration-promote").click();
  await expect(page.getByTestId("migration-promoted")).toContainText('kept as "previous/try-synapsis"', { timeout: 60_000 });
  await expect(page.getByTestId("kept-previous/try-synapsis")).toBeVisible();
  expect([...(await searchSteps(request, key))].every((s) => SYNAPSIS_STEPS.includes(s))).toBe(true);
  // The agents' Mem0 endpoint still answers (synapsis has no memory step: it reads what the pipeline serves), never a mem0 memory.
  const mem0Promoted = await mem0Search(request, key);
  expect(mem0Promoted.status()).toBe(200);
  expect(((await mem0Promoted.json()) as { results: Array<{ id: string }> }).results.every((r) => !r.id.startsWith("mem-"))).toBe(true);
  await shots(page, "promoted");

  // Restore the old architecture in one action: the REST search and the Mem0 endpoint answer from mem0's memories again.
  page.once("dialog", (d) => void d.accept());
  await page.getByTestId("restore-previous/try-synapsis").click();
  await expect(page.getByTestId("migration-restored")).toContainText('Restored main from "previous/try-synapsis"', { timeout: 60_000 });
  const back = await searchSteps(request, key);
  expect(back.has("memories")).toBe(true);
  expect([...back].every((s) => MEM0_STEPS.includes(s))).toBe(true);
  const mem0After = await mem0Search(request, key);
  expect(mem0After.status()).toBe(200);
  expect(((await mem0After.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
});
