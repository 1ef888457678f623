import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { startMockOpenAIServer, type MockOpenAIServer } from "../server/llm/testing/mock-openai-server";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";
import { signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * Answers and the LLM judge configured in the browser: an OpenAI-compatible provider added in
 * Settings → Models (the mock server this test starts on 127.0.0.1; playwright.config.ts lets the
 * app reach loopback), an eval started from the Evals tab with an answer model, a judge model and
 * a budget, and j shown as measured in the runs table and the compare view — beside an offline
 * run whose j is "not measured" with its reason.
 */
const stamp = Date.now();
const KEY = "sk-e2e-judge";
const dir = mkdtempSync(path.join(tmpdir(), "synthex-e2e-judge-"));
const FILE = path.join(dir, "tiny-locomo.json");
writeFileSync(FILE, JSON.stringify(locomoFixture()));

const SPEC = {
  version: 1,
  sources: [{ name: "chats", format: "json" }],
  steps: [{ type: "split", name: "windows", from: "chats", operator: { kind: "windows", radius: 1 } }],
  outputs: [{ name: "search", surface: "search", from: ["windows"] }],
};

let mock: MockOpenAIServer;
test.beforeAll(async () => {
  // The judge grades the Pepper question CORRECT and every other WRONG; answers are a fixed phrase.
  mock = await startMockOpenAIServer({
    apiKey: KEY,
    behave: (request) => {
      if (request.text.includes("Gold answer:")) return { kind: "ok", content: request.text.includes("What kind of dog is Pepper?") ? '{"label": "CORRECT"}' : '{"label": "WRONG"}' };
      return { kind: "ok", content: request.text.includes("What kind of dog is Pepper?") ? "a grey whippet" : "not mentioned" };
    },
  });
});
test.afterAll(async () => {
  await mock?.close();
});

async function completedRows(page: Page, n: number) {
  await expect(page.locator('[data-testid="eval-run-row"][data-status="completed"]')).toHaveCount(n, { timeout: 180_000 });
}

test("configure a provider in Settings, run an eval with an answer model and judge from the UI, see j measured", async ({ page }, info) => {
  test.setTimeout(400_000);
  const shot = (name: string) => page.screenshot({ path: info.outputPath(name), fullPage: true }).then((b) => info.attach(name, { body: b, contentType: "image/png" }));
  const slug = await signUp(page, { email: `judge-${stamp}@example.com`, password: "judge-password-1" });
  const workspaceId = await workspaceIdOf(page, slug);
  // Setup: the pipeline and a second branch (what is under test is Settings and the Evals tab).
  const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "judged", spec: SPEC }, "mutation");
  await trpc(page, "branch.create", { workspaceId, pipelineId: created.pipeline.id, name: "offline" }, "mutation");

  // Settings → Models: an OpenAI-compatible provider named "mock" at the mock server.
  await page.goto(`/w/${slug}/settings/models`);
  await page.getByLabel("Name").fill("mock");
  await page.locator("form").getByRole("combobox").click();
  await page.getByRole("option", { name: /OpenAI-compatible/ }).click();
  await page.getByLabel("Base URL").fill(mock.baseUrl);
  await page.getByTestId("provider-key-input").fill(KEY);
  await page.getByRole("button", { name: "Add provider" }).click();
  await expect(page.getByTestId("provider-mock")).toBeVisible();

  await page.goto(`/w/${slug}/pipelines/${created.pipeline.id}/evals?branch=main`);
  // The providers line is filled once the page is live (an upload before that would be lost). Just
  // after load, React's streamed copy of the page can still sit in a hidden <div id="S:0"> beside
  // the shown one: the visible one is the page.
  await expect(page.getByTestId("eval-answering").filter({ visible: true })).toContainText("Providers in this workspace: mock, offline");
  await page.getByTestId("eval-upload").setInputFiles(FILE);
  await expect(page.getByTestId("eval-dataset")).toContainText("tiny-locomo.json (9 questions)");

  // A model whose provider is not configured: said before anything runs.
  await page.getByTestId("eval-answer-model").fill("nowhere/gpt-4o-mini");
  await expect(page.getByTestId("eval-answering-error")).toHaveText('No provider named "nowhere" in this workspace: add it in Settings → Models.');
  await expect(page.getByTestId("run-eval")).toBeDisabled();
  await shot("judge-01-unconfigured-provider.png");

  // main: answered by mock/gpt-4o-mini, judged by mock/judge-1, within a $0.50 budget.
  await page.getByTestId("eval-answer-model").fill("mock/gpt-4o-mini");
  await page.getByTestId("eval-judge-model").fill("mock/judge-1");
  await page.getByTestId("eval-budget").fill("0.5");
  await expect(page.getByTestId("eval-answering-error")).toHaveCount(0);
  await page.getByTestId("eval-branch").selectOption("main");
  await page.getByTestId("eval-mode").selectOption("bm25");
  await page.getByTestId("eval-step").selectOption("windows");
  await page.getByTestId("run-eval").click();
  await completedRows(page, 1);
  const judged = page.locator('[data-testid="eval-run-row"][data-label="judged@main"]');
  const j = judged.getByTestId("metric-j").locator("span");
  await expect(j).toHaveAttribute("data-measured", "true");
  // One CORRECT (Pepper) among the judged questions: a measured share, neither 0 nor 1.
  const value = Number(await j.textContent());
  expect(value).toBeGreaterThan(0);
  expect(value).toBeLessThan(1);
  await expect(j).toHaveAttribute("title", /judged by mock\/judge-1 \(answers by mock\/gpt-4o-mini\) on \d+ questions; spent \$[\d.]+ of \$0\.50/);
  await expect(judged.getByTestId("metric-f1")).toHaveText(/^0\.\d{3}$/);
  // The browser's choices reached the models: answers by gpt-4o-mini, verdicts by judge-1.
  const chats = mock.requests.filter((r) => r.path.endsWith("/chat/completions"));
  expect(chats.filter((r) => r.body.model === "gpt-4o-mini").length).toBeGreaterThan(0);
  expect(chats.filter((r) => r.body.model === "judge-1").length).toBeGreaterThan(0);
  expect(chats.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);

  // The other branch offline (answer model cleared): j not measured, and the row says why.
  await page.getByTestId("eval-answer-model").fill("");
  await page.getByTestId("eval-judge-model").fill("");
  await page.getByTestId("eval-budget").fill("");
  await page.getByTestId("eval-branch").selectOption("offline");
  await page.getByTestId("run-eval").click();
  await completedRows(page, 2);
  const offline = page.locator('[data-testid="eval-run-row"][data-label="judged@offline"]').getByTestId("metric-j").locator("span");
  await expect(offline).toHaveText("not measured");
  await expect(offline).toHaveAttribute("title", /offline: no model configured.*j was not measured/);
  await shot("judge-02-runs-table.png");

  // Compare view: who answered and judged each run, F1 and j side by side.
  await page.getByLabel("Select judged@main").check();
  await page.getByLabel("Select judged@offline").check();
  await page.getByTestId("compare-selected").click();
  const answers = page.getByTestId("answer-scores");
  await expect(answers).toBeVisible();
  const mainRow = answers.locator('[data-testid="answer-scores-row"][data-label="judged@main"]');
  await expect(mainRow).toContainText("mock/gpt-4o-mini");
  await expect(mainRow).toContainText("mock/judge-1");
  await expect(mainRow.getByTestId("compare-j")).toHaveText(value.toFixed(3));
  const offlineRow = answers.locator('[data-testid="answer-scores-row"][data-label="judged@offline"]');
  await expect(offlineRow).toContainText("extractive (offline)");
  await expect(offlineRow.getByTestId("compare-j")).toHaveText("not measured");
  await shot("judge-03-compare-answers.png");
});
