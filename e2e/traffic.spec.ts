import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { startMockOpenAIServer, type MockOpenAIServer } from "../server/llm/testing/mock-openai-server";
import { createApiKey, FIXTURE, newPipeline, SCREENSHOT_DIR, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Issue 37 in the browser: a pipeline with its own memory, the query log turned on in the Traffic
 * tab, queries sent over REST with a key made in the UI, the Traffic tab showing them (with the
 * caller and served hits), a replay on a branch with main's and the branch's hits side by side
 * (preference "not measured" without a judge model; with a judge model on the mock OpenAI-compatible
 * server added in Settings → Models, measured: the branch shares main's hits, so every query is a
 * tie without a call), a label ("first should be") that puts the
 * query in the question set "from-traffic", and that set scored from the Evals tab. Screenshots at
 * 1440 and 1024 px wide go to SCREENSHOT_DIR.
 */
const stamp = Date.now();
const user = { email: `traffic-${stamp}@example.com`, password: "traffic-password-1" };
const QUERIES = ["lighthouse key", "blue ceramic frog", "lighthouse key"];
const KEY = "sk-e2e-traffic-judge";

let mock: MockOpenAIServer;
test.beforeAll(async () => {
  mock = await startMockOpenAIServer({ apiKey: KEY, behave: () => ({ kind: "ok", content: '{"better": "A"}' }) });
});
test.afterAll(async () => {
  await mock?.close();
});

/** A full-page screenshot at 1440 and at 1024 px wide (the page stays at 1440 afterwards). */
async function shots(page: Page, name: string) {
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `traffic-${name}-${width}.png`), fullPage: true });
  }
}

test.use({ viewport: { width: 1440, height: 900 } });

test("traffic: log on, queries over REST, Traffic shows them, replay on a branch side by side, a label scored in Evals", async ({ page, request }) => {
  test.setTimeout(420_000);
  const slug = await signUp(page, user);
  const overview = await newPipeline(page, slug, "traffic-memory");
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // A branch to replay on (from the overview; it shares main's records until it changes).
  await page.goto(`${overview}?branch=main`);
  await page.getByTestId("new-branch").click();
  await page.getByTestId("branch-name").fill("candidate");
  await page.getByTestId("create-branch").click();
  await expect(page).toHaveURL(/branch=candidate/);

  const key = await createApiKey(page, slug, "traffic-agent");

  // Settings → Models: an OpenAI-compatible provider "mock" at the mock server, for the judge.
  await page.goto(`/w/${slug}/settings/models`);
  await page.getByLabel("Name").fill("mock");
  await page.locator("form").getByRole("combobox").click();
  await page.getByRole("option", { name: /OpenAI-compatible/ }).click();
  await page.getByLabel("Base URL").fill(mock.baseUrl);
  await page.getByTestId("provider-key-input").fill(KEY);
  await page.getByRole("button", { name: "Add provider" }).click();
  await expect(page.getByTestId("provider-mock")).toBeVisible();

  // Traffic tab: the log starts off; turn it on.
  await page.goto(`${overview}/traffic?branch=main`);
  await expect(page.getByTestId("log-status")).toHaveText("off");
  // The visible one: while the streamed page is revealed and hydrated, React's server copy can still sit in a
  // hidden <div> beside it (a strict getByText once found both on a loaded CI machine).
  await expect(page.getByText("The query log is off").filter({ visible: true })).toHaveCount(1);
  await page.getByTestId("log-toggle").click();
  await expect(page.getByTestId("log-status")).toHaveText("on");

  // Queries from an agent over REST with the key.
  for (const query of QUERIES) {
    const res = await request.get(`/api/v1/pipelines/traffic-memory/search?query=${encodeURIComponent(query)}&limit=5`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status()).toBe(200);
    expect(((await res.json()) as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
  }

  // Traffic shows them: the count, the most frequent, each query with its caller and served hits.
  await page.reload();
  await expect(page.getByTestId("traffic-total")).toHaveText("3 queries", { timeout: 20_000 });
  const rows = page.getByTestId("logged-query");
  await expect(rows).toHaveCount(3);
  await expect(rows.filter({ hasText: "blue ceramic frog" })).toContainText("rest · search");
  await expect(rows.first().getByTestId("logged-caller")).toHaveText(/^API key traffic-agent \(sx_/);
  await expect(rows.first().getByRole("link").first()).toHaveAttribute("href", /\/records\//);
  await shots(page, "01-log");

  // Replay on the branch: every logged query, main's and the branch's hits side by side.
  await page.getByLabel("Branch to replay on").fill("candidate");
  await page.getByTestId("replay-submit").click();
  const report = page.getByTestId("replay-report");
  await expect(report).toBeVisible({ timeout: 60_000 });
  await expect(report.getByTestId("replay-row")).toHaveCount(3);
  await expect(report).toContainText("3 queries on candidate vs main");
  // Searches cite nothing: citation recall is said to be not measured, not shown as a number.
  await expect(report).toContainText("Citation recall not measured");
  // The branch shares main's records: the same hits, overlap 1.
  await expect(report.getByTestId("replay-overlap")).toHaveText("1.000");
  const first = report.getByTestId("replay-row").first();
  const mainHits = await first.locator("td").nth(1).getByRole("link").allTextContents();
  expect(mainHits.length).toBeGreaterThan(0);
  expect(await first.locator("td").nth(2).getByRole("link").allTextContents()).toEqual(mainHits);
  // Each served record is shown as its text (issue 48: not an id fragment), the whole text on hover.
  const hit = first.getByTestId("replay-hit").first();
  const words = (t: string) => t.replace(/\s+/g, " ").trim();
  const full = words((await hit.getAttribute("title")) ?? "");
  expect(full.length).toBeGreaterThan(20);
  expect(full.startsWith(words(await hit.innerText()).slice(0, 20))).toBe(true);
  // An unchanged branch: the latency difference is reported with its interval.
  await expect(report.getByTestId("replay-latency-diff")).toContainText("branch − main");
  // No judge model given: the preference is said to be not measured, with no number.
  await expect(page.getByTestId("replay-preference")).toContainText("not measured");
  await shots(page, "02-replay");

  // With a judge model: measured. The branch serves main's hits, so each query is a tie without a call.
  await page.getByLabel("Judge model (optional)").fill("mock/judge-1");
  await page.getByTestId("replay-submit").click();
  await expect(page.getByTestId("replay-preference")).toContainText("Preference (mock/judge-1, asked in both orders): candidate better 0, main better 0, tie 3.");
  await expect(page.getByTestId("replay-preference")).toContainText("Win rate of candidate 50.0%");
  await expect(report.getByTestId("replay-row").first()).toContainText("tie (same hits)");
  expect(mock.count("chat/completions")).toBe(0);
  await shots(page, "02b-replay-judged");

  // A label: the record that should have come first; the query joins the question set "from-traffic".
  const frog = rows.filter({ hasText: "blue ceramic frog" });
  await frog.getByTestId("label-first").first().click();
  await expect(page.getByText('Added to question set "from-traffic" (1 question): score it in Evals.')).toBeVisible();
  await expect(frog.getByText("labelled first")).toBeVisible();
  await shots(page, "03-labelled");

  // Evals: the new set is a benchmark choice, scored on the pipeline's own memory.
  await page.goto(`${overview}/evals?branch=main`);
  await page.getByTestId("eval-dataset").selectOption({ label: "question set · from-traffic (1 question)" });
  await page.getByTestId("run-eval").click();
  const row = page.locator('[data-testid="eval-run-row"][data-label="traffic-memory@main"]');
  await expect(row).toHaveAttribute("data-status", "completed", { timeout: 240_000 });
  await expect(row).toContainText("question-set");
  // The labelled record (served first for "blue ceramic frog") is found: hit@5 is 1.
  await expect(row.getByTestId("metric-session_hit@5")).toHaveText("1.000");
  await shots(page, "04-evals");
});
