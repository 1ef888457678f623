import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { textPdf, textPng, toneWav } from "../server/importers/testing/media-fixtures";
import { startMockOpenAIServer, type MockOpenAIServer } from "../server/llm/testing/mock-openai-server";
import { searchMemory, signUp, trpc, waitForRun, workspaceId as workspaceIdOf } from "./helpers";

/**
 * Documents, images and memos in a real browser: a 3-page PDF, a PNG of a whiteboard and a WAV memo
 * are uploaded through a source's drop zone (the workspace has the mock server as its OpenAI-compatible
 * provider, so the memo is transcribed), the pipeline runs, search finds a phrase from page 2 and one
 * from the image, and each drill-down shows the page number / the thumbnail and OCR lines / the memo's times.
 * Screenshots at 1024 and 1440 px wide.
 */
const stamp = Date.now();
const KEY = "sk-media-e2e";
let mock: MockOpenAIServer;
let dir: string;
test.beforeAll(async () => {
  mock = await startMockOpenAIServer({ apiKey: KEY });
  dir = mkdtempSync(path.join(tmpdir(), "synthex-e2e-media-"));
  writeFileSync(path.join(dir, "lease.pdf"), await textPdf(["Lease agreement\nTenant: Sam", "The landlord keeps the spare key under the blue planter.", "Signatures"], { title: "Lease", author: "Agency" }));
  writeFileSync(path.join(dir, "whiteboard.png"), await textPng(["Offsite venue: Marseille harbour", "Budget approved"]));
  await toneWav(path.join(dir, "memo.wav"), 3);
});
test.afterAll(async () => {
  await mock?.close();
});

async function shots(page: Page, name: string, out: (n: string) => string) {
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: out(`${name}-${width}.png`), fullPage: true });
  }
}

/** Search, open the top hit and drill down to its raw source in the explorer (the origin shows there), then its record page. */
async function openSourceOf(page: Page, overview: string, query: string, match: RegExp, shot: (name: string) => Promise<void>) {
  await page.goto(`${overview}/explore`);
  await searchMemory(page, query);
  await page.getByTestId("search-result").first().click();
  const content = page.getByTestId("record-content");
  for (let depth = 0; depth < 4; depth++) {
    const items = page.getByTestId("source-column").getByTestId("source-item");
    await expect(items.first()).toBeVisible();
    const matching = items.filter({ hasText: match });
    await ((await matching.count()) ? matching.first() : items.first()).click();
    await expect(content).toBeVisible();
    if (await page.getByTestId("leaf-badge").isVisible()) break;
    await page.getByTestId("drill-down").click();
  }
  await expect(page.getByTestId("leaf-badge")).toBeVisible();
  await expect(page.getByTestId("media-origin")).toBeVisible();
  await shot("explorer");
  await page.getByTestId("open-record").click();
  await expect(page).toHaveURL(/\/records\//);
  await expect(page.getByTestId("media-origin")).toBeVisible();
  await shot("record");
}

test("upload a PDF, an image and a memo; search finds page 2 and the image; drill-downs show page, thumbnail, times", async ({ page }, info) => {
  test.setTimeout(300_000);
  const out = (n: string) => info.outputPath(n);
  const slug = await signUp(page, { email: `media-${stamp}@example.com`, password: "media-password-1" });
  const workspaceId = await workspaceIdOf(page, slug);
  await trpc(page, "provider.upsert", { workspaceId, name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: KEY }, "mutation");
  const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "documents", template: "rag-baseline", format: "folder" }, "mutation");
  const overview = `/w/${slug}/pipelines/${created.pipeline.id}`;

  await page.goto(overview);
  await page.getByTestId("upload-chats").locator('input[type="file"]').setInputFiles(["lease.pdf", "whiteboard.png", "memo.wav"].map((f) => path.join(dir, f)));
  const reports = page.getByTestId("upload-report-chats");
  await expect(reports).toHaveCount(3, { timeout: 60_000 });
  await expect(reports.filter({ hasText: "lease.pdf" })).toContainText("pdf · 3 read · 3 added");
  await expect(reports.filter({ hasText: "whiteboard.png" })).toContainText("image · 1 read · 1 added");
  await expect(reports.filter({ hasText: "memo.wav" })).toContainText("audio · 1 read · 1 added");
  await shots(page, "01-uploaded", out);
  await expect(page.getByTestId("run-button")).toHaveText(/^Run$/, { timeout: 15_000 });
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  await openSourceOf(page, overview, "spare key blue planter", /blue planter/, (n) => shots(page, `02-pdf-page-${n}`, out));
  await expect(page.getByTestId("media-position")).toHaveText("page 2 of 3");
  await expect(page.getByTestId("record-content")).toContainText("spare key under the blue planter");

  await openSourceOf(page, overview, "Marseille harbour", /Marseille/, (n) => shots(page, `03-image-ocr-${n}`, out));
  // The stored original, read through the record (the importer's thumbnail stands in until it arrives).
  await expect(page.getByTestId("image-ocr").getByRole("img", { name: "Image whiteboard.png" })).toBeVisible();
  await expect(page.getByTestId("image-ocr")).toContainText("Offsite venue: Marseille harbour");

  await openSourceOf(page, overview, "water the basil", /basil/, (n) => shots(page, `04-memo-${n}`, out));
  await expect(page.getByTestId("memo-segments")).toContainText("0:01–0:03");
  await expect(page.getByTestId("memo-segments")).toContainText("Remember to water the basil");
});
