import { mkdirSync } from "node:fs";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { SCREENSHOT_DIR, createInvite, editSummariesInCanvas, newPipeline, signUp as signUpAs, trpc, uploadToSource, waitForRun, workspaceId } from "./helpers";

/**
 * Issue 33 items 1, 4, 5, 6 in the browser: a protected main offers "Save as new branch"; prompt
 * history (text diff, restore, TOML export/import, the rendered prompt on the record page); the
 * branch survives every navigation and the Branches tab's run badge follows a run; a palette step
 * lands in view, zoom-to-fit stays readable, overview nodes never overlap, an opened lineage group
 * keeps the record in view. Screenshots at 1024 and 1440 px go to SCREENSHOT_DIR (e2e/helpers.ts).
 */
test.use({ viewport: { width: 1440, height: 900 } });

const stamp = Date.now();
const MEASURE = SCREENSHOT_DIR;
const signUp = (page: Page, who: string) => signUpAs(page, { email: `${who}-${stamp}@example.com`, password: `${who}-password-1` });

/** Screenshots of the screen at 1024 and 1440 px wide. */
async function shots(page: Page, name: string) {
  mkdirSync(MEASURE, { recursive: true });
  const size = page.viewportSize()!;
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${MEASURE}/canvas-${name}-${width}.png` });
  }
  await page.setViewportSize(size);
}

/** Conversations in ChatGPT's export format, one a day. */
function chatExport(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `conv-${i}`,
    title: `Garden ${i}`,
    create_time: 1714600000 + i * 86_400,
    current_node: `m${i}`,
    mapping: {
      [`m${i}`]: {
        id: `m${i}`,
        parent: null,
        children: [],
        message: { author: { role: "user" }, content: { content_type: "text", parts: [`Day ${i}: the tomato bed ${i} needs water. We decided to plant basil next week.`] } },
      },
    },
  }));
}
const exportFile = (n: number) => ({ name: "conversations.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(chatExport(n))) });

/** `inner` lies wholly inside `outer` on screen. */
async function expectInside(inner: Locator, outer: Locator, what: string) {
  const a = (await inner.boundingBox())!;
  const b = (await outer.boundingBox())!;
  const inside = a.x >= b.x - 1 && a.y >= b.y - 1 && a.x + a.width <= b.x + b.width + 1 && a.y + a.height <= b.y + b.height + 1;
  expect(inside, `${what}: node at ${JSON.stringify(a)} is outside the visible area ${JSON.stringify(b)}`).toBe(true);
}

/** The React Flow zoom of the graph inside `root`. */
async function zoomOf(root: Locator) {
  const transform = await root.locator(".react-flow__viewport").evaluate((el) => (el as HTMLElement).style.transform);
  return Number(/scale\(([\d.]+)\)/.exec(transform)?.[1] ?? NaN);
}

test("1 · an editor on a protected main saves the edits as a new branch; nothing stays stranded on main", async ({ browser }) => {
  test.setTimeout(180_000);
  const owner = await (await browser.newContext()).newPage();
  const slug = await signUp(owner, "protected-owner");
  const overview = await newPipeline(owner, slug, "protected");
  const link = await createInvite(owner, "editor");

  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await page.goto(link);
  await page.getByRole("link", { name: "Create an account to join" }).click();
  await page.waitForURL(/\/signup\?invite=/);
  await page.getByLabel("Email").fill(`protected-editor-${stamp}@example.com`);
  await page.getByLabel("Password").fill("protected-editor-1");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByTestId("current-role")).toHaveText("editor");

  // The editor edits the summaries prompt on main.
  await page.goto(`${overview}/canvas?branch=main`);
  await page.getByTestId("canvas-node-summaries").click();
  await page.getByTestId("node-panel").getByTestId("template-editor").locator(".cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\nName every decision.");
  await expect(page.getByTestId("unsaved-badge")).toBeVisible();

  // Save is disabled, the reason is on screen (not only a tooltip), and the way out is next to it.
  await expect(page.getByTestId("save-version")).toBeDisabled();
  await expect(page.getByTestId("save-blocker")).toBeVisible();
  await expect(page.getByTestId("save-blocker")).toContainText("Main is protected");
  await expect(page.getByTestId("save-as-branch")).toBeVisible();
  await shots(page, "1-protected-main");

  await page.getByTestId("save-as-branch").click();
  await page.getByTestId("save-as-branch-name").fill("editor-decisions");
  await page.getByTestId("save-as-branch-message").fill("Summaries: name every decision");
  await page.getByTestId("confirm-save-as-branch").click();

  // The edits are saved on the new branch, and the canvas is there.
  await expect(page).toHaveURL(/[?&]branch=editor-decisions/);
  await expect(page.getByTestId("branch-select")).toHaveValue("editor-decisions");
  await expect(page.getByTestId("unsaved-badge")).toHaveCount(0);
  const ws = await workspaceId(page, slug);
  const pipelineId = overview.split("/").pop()!;
  type Got = { version: { message: string; spec: { steps: Array<{ name: string; prompt?: string }> } } };
  const onBranch = await trpc<Got>(page, "pipeline.get", { workspaceId: ws, pipelineId, branch: "editor-decisions" });
  expect(onBranch.version.message).toBe("Summaries: name every decision");
  expect(onBranch.version.spec.steps.find((s) => s.name === "summaries")!.prompt).toContain("Name every decision.");
  const onMain = await trpc<Got>(page, "pipeline.get", { workspaceId: ws, pipelineId, branch: "main" });
  expect(onMain.version.spec.steps.find((s) => s.name === "summaries")!.prompt).not.toContain("Name every decision.");

  // Nothing is left stranded on main: no draft comes back there.
  await page.goto(`${overview}/canvas?branch=main`);
  await expect(page.getByTestId("canvas-node-summaries")).toBeVisible();
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);
  await expect(page.getByTestId("unsaved-badge")).toHaveCount(0);
});

test("4 · prompt history: a text diff between versions, restore as a new audited version, TOML export and import, the rendered prompt on the record", async ({ page }) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, "history");
  const overview = await newPipeline(page, slug, "history");
  await editSummariesInCanvas(page, overview, "main", "Focus on the decisions.", "Summaries: decisions");

  // The diff of the new version shows the prompt's text, the insertion marked.
  const diff = page.getByTestId("prompt-diff-summaries");
  await expect(diff).toBeVisible();
  await expect(diff.locator("ins")).toContainText("Focus on the decisions.");
  await expect(diff).toContainText("Summarize this conversation");
  // It opens scrolled to the first change: the text added at the end is in view inside its box (issue 48).
  const text = diff.getByTestId("prompt-diff-text");
  await expect
    .poll(() => text.evaluate((pre) => {
      const ins = pre.querySelector("ins") as HTMLElement;
      const top = ins.offsetTop - pre.scrollTop;
      return top >= 0 && top + ins.offsetHeight <= pre.clientHeight + 1;
    }))
    .toBe(true);
  await shots(page, "4-prompt-diff");

  // Restore the first version: a new version (head), the edit gone, audited.
  const rows = page.getByTestId("version-row");
  await expect(rows).toHaveCount(2);
  await rows.last().getByTestId("version-restore").click();
  await page.getByTestId("confirm-restore").click();
  await expect(rows).toHaveCount(3);
  await expect(rows.first()).toContainText("Restore");
  await page.reload();
  await page.getByTestId("canvas-node-summaries").click();
  await expect(page.getByTestId("template-preview")).not.toContainText("Focus on the decisions.");
  const ws = await workspaceId(page, slug);
  const audit = await trpc<{ entries: Array<{ action: string }> }>(page, "audit.list", { workspaceId: ws, action: "pipeline.restoreVersion" });
  expect(audit.entries).toHaveLength(1);

  // TOML export: the canvas's spec as the CLI writes it.
  const downloading = page.waitForEvent("download");
  await page.getByTestId("export-toml").click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe("history.toml");
  const toml = await (await download.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString("utf8"));
  expect(toml).toContain('name = "summaries"');

  // TOML import: a syntax error says where; a good file replaces the canvas as unsaved edits.
  await page.getByTestId("import-toml").setInputFiles({ name: "bad.toml", mimeType: "application/toml", buffer: Buffer.from('version = 1\n[[sources]\nname = "x"\n') });
  await expect(page.getByTestId("toml-import-error")).toContainText("line 2");
  const edited = toml.replace("Summarize this conversation", "Imported: summarize this conversation");
  expect(edited).not.toBe(toml);
  await page.getByTestId("import-toml").setInputFiles({ name: "history.toml", mimeType: "application/toml", buffer: Buffer.from(edited) });
  await expect(page.getByTestId("unsaved-badge")).toBeVisible();
  await page.getByTestId("canvas-node-summaries").click();
  await expect(page.getByTestId("template-preview")).toContainText("Imported: summarize this conversation");
  await shots(page, "4-toml-imported");
  // The import is an unsaved draft like any edit: kept over a reload, and discarded from there.
  await page.reload();
  await expect(page.getByTestId("draft-restored")).toBeVisible();
  await page.getByTestId("discard-draft").click();
  await expect(page.getByTestId("unsaved-badge")).toHaveCount(0);

  // The record page shows the prompt a record was made from, not only its hash.
  await page.goto(overview);
  await uploadToSource(page, "chats", exportFile(3), "3 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await page.goto(`${overview}/records?branch=main&step=summaries`);
  await page.getByTestId("record-row").first().getByRole("link").first().click();
  await expect(page.getByTestId("rendered-prompt")).toContainText("Summarize this conversation");
  await expect(page.getByTestId("rendered-prompt")).toContainText("tomato bed");
  await shots(page, "4-record-rendered-prompt");
});

test("5 · the branch is kept on every navigation; the Branches tab's run badge follows the run without a reload", async ({ page }) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, "keepbranch");
  const overview = await newPipeline(page, slug, "keepbranch");
  // Enough work that the run is still going when the Branches tab opens.
  await uploadToSource(page, "chats", exportFile(200), "200 added", 60_000);
  await page.getByTestId("new-branch").click();
  await page.getByTestId("branch-name").fill("feature");
  await page.getByTestId("create-branch").click();
  await expect(page).toHaveURL(/branch=feature/);

  // The canvas's "← Overview" keeps the branch.
  await page.goto(`${overview}/canvas?branch=feature`);
  await expect(page.getByTestId("canvas-node-summaries")).toBeVisible();
  await page.getByRole("link", { name: "Overview" }).click();
  await expect(page).toHaveURL(new RegExp(`${overview}\\?branch=feature$`));

  // The Branches tab, opened in a second tab before the run and never reloaded, follows the run by itself
  // (however fast the run is: the badge goes from no run to the run's end without a reload).
  const tab = await page.context().newPage();
  await tab.goto(`${overview}/branches?branch=feature`);
  const badge = tab.getByTestId("branch-row-feature").locator("[data-status]");
  // Before the run: the branch has none ("never").
  await expect(tab.getByTestId("branch-row-feature")).toContainText("never");
  await expect(page.getByTestId("run-button")).toHaveText(/^Run$/, { timeout: 30_000 });
  await page.getByTestId("run-button").click();
  await expect(page).toHaveURL(/\/runs\/[^/?]+/);
  await expect(badge).toHaveAttribute("data-status", /queued|running|completed/, { timeout: 60_000 });
  await shots(tab, "5-branches-running");
  await expect(badge).toHaveAttribute("data-status", "completed", { timeout: 180_000 });
  await tab.close();

  // A record of the branch: its run link keeps the branch.
  await page.goto(`${overview}/records?branch=feature&step=summaries`);
  await page.getByTestId("record-row").first().getByRole("link").first().click();
  await expect(page).toHaveURL(/branch=feature/);
  const runLink = page.getByRole("link", { name: /^[0-9a-z]{8}$/ }).first();
  await expect(runLink).toHaveAttribute("href", /[?&]branch=feature/);
});

test("6a · a step added from the palette lands in view; zoom-to-fit stays readable for 2 nodes and for 16", async ({ page }) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1024, height: 768 });
  const slug = await signUp(page, "canvasview");
  const overview = await newPipeline(page, slug, "canvasview");
  await page.goto(`${overview}/canvas`);
  const canvas = page.getByTestId("canvas");
  await expect(page.getByTestId("canvas-node-windows")).toBeVisible();

  // Select the lowest node on screen and add a step under it.
  let lowest = "";
  let lowestY = -Infinity;
  for (const name of ["chats", "transcripts", "summaries", "monthly", "world-model", "windows"]) {
    const box = (await page.getByTestId(`canvas-node-${name}`).boundingBox())!;
    if (box.y > lowestY) [lowest, lowestY] = [name, box.y];
  }
  await page.getByTestId(`canvas-node-${lowest}`).click();
  await page.getByTestId("palette-chunk").click();
  const added = page.getByTestId("canvas-node-chunks");
  await expect(added).toBeVisible();
  await page.waitForTimeout(500);
  await expectInside(added, canvas, "the step added from the palette");
  await shots(page, "6-palette-added");

  // Zoom-to-fit on a two-node pipeline is not huge, on a sixteen-step one not tiny.
  const ws = await workspaceId(page, slug);
  const source = { name: "chats", format: "chatgpt-export" };
  const small = { sources: [source], steps: [{ name: "digest", type: "transform", from: "chats", operator: { kind: "extractive-summary", sentences: 3 } }], outputs: [] };
  const chain = Array.from({ length: 16 }, (_, i) => ({ name: `part-${i}`, type: "split", from: i ? `part-${i - 1}` : "chats", operator: { kind: "chunk", size: 1200, overlap: 0 } }));
  const big = { sources: [source], steps: chain, outputs: [{ name: "search", surface: "search", from: chain.map((s) => s.name) }] };
  const base = `/w/${slug}/pipelines`;
  for (const [name, spec, check] of [
    ["two-nodes", small, (z: number) => z <= 1.25],
    ["sixteen-steps", big, (z: number) => z >= 0.5],
  ] as const) {
    const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId: ws, name, spec }, "mutation");
    await page.goto(`${base}/${created.pipeline.id}/canvas`);
    await expect(page.getByTestId("canvas-node-chats")).toBeVisible();
    await page.locator(".react-flow__controls-fitview").click();
    await page.waitForTimeout(500);
    const zoom = await zoomOf(canvas);
    expect(check(zoom), `${name}: zoom-to-fit gave ${zoom}`).toBe(true);
    await shots(page, `6-fit-${name}`);
  }
});

test("6c · the turn windows' options in the inspector: a compact session date and centred windows, in the exported TOML", async ({ page }) => {
  test.setTimeout(180_000);
  const slug = await signUp(page, "turnsopts");
  const overview = await newPipeline(page, slug, "turnsopts");
  await page.goto(`${overview}/canvas`);
  await page.getByTestId("canvas-node-windows").click();
  const panel = page.getByTestId("node-panel");
  await expect(panel.getByTestId("op-date")).toHaveValue("as-written");
  await expect(panel.getByTestId("op-centered")).not.toBeChecked();
  await panel.getByTestId("op-date").selectOption("compact");
  await panel.getByTestId("op-centered").check();
  await expect(page.getByTestId("unsaved-badge")).toBeVisible();
  await expect(page.getByTestId("problems-panel")).toContainText("No problems");
  await shots(page, "6c-turns-options");

  const downloading = page.waitForEvent("download");
  await page.getByTestId("export-toml").click();
  const toml = await (await (await downloading).createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString("utf8"));
  const windows = toml.slice(toml.indexOf('name = "windows"'));
  expect(windows).toMatch(/date = "compact"/);
  expect(windows).toMatch(/centered = true/);

  // Back to the default: the key leaves the spec rather than being written as its default.
  await panel.getByTestId("op-date").selectOption("as-written");
  const again = page.waitForEvent("download");
  await page.getByTestId("export-toml").click();
  const toml2 = await (await (await again).createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString("utf8"));
  expect(toml2).not.toContain('date = "');
});

test("6b · overview graph nodes never overlap; opening a lineage group keeps the record in view", async ({ page }) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, "graphs");
  const overview = await newPipeline(page, slug, "graphs");
  await uploadToSource(page, "chats", exportFile(30), "30 added", 60_000);
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  // A prompt edit: every step downstream carries "changed", "pending" and the last run's badge.
  await editSummariesInCanvas(page, overview, "main", "Name the plants.", "plants");
  await page.goto(overview);
  const dag = page.getByTestId("pipeline-dag");
  await expect(dag.getByTestId("changed-summaries")).toBeVisible();
  await page.waitForTimeout(500);
  const boxes = await dag.locator(".react-flow__node").evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { id: el.getAttribute("data-id"), x: r.x, y: r.y, w: r.width, h: r.height };
    }),
  );
  expect(boxes.length).toBeGreaterThanOrEqual(7);
  const overlaps: string[] = [];
  for (const [i, a] of boxes.entries()) {
    for (const b of boxes.slice(i + 1)) {
      if (a.x < b.x + b.w - 1 && b.x < a.x + a.w - 1 && a.y < b.y + b.h - 1 && b.y < a.y + a.h - 1) overlaps.push(`${a.id} × ${b.id}`);
    }
  }
  expect(overlaps, "overview nodes that overlap").toEqual([]);
  await shots(page, "6-overview-graph");

  // The monthly record: open its group of summaries; the record stays in view.
  await page.goto(`${overview}/records?branch=main&step=monthly`);
  await page.getByTestId("record-row").first().getByRole("link").first().click();
  const graph = page.getByTestId("lineage-graph");
  await expect(graph).toBeVisible({ timeout: 60_000 });
  const group = graph.locator('[data-testid="lineage-group"][data-step="summaries"]');
  await group.click();
  await expect(graph.getByTestId("lineage-more")).toBeVisible();
  await page.waitForTimeout(800);
  const root = graph.locator(".react-flow__node").filter({ hasText: "this record" });
  await expect(root).toHaveCount(1);
  await expectInside(root, graph, "the record after opening a group");
  await shots(page, "6-lineage-open");
});
