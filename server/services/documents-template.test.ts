/**
 * The documents template (issue 35) offline, on a real database: a folder with a two-page PDF and a
 * Markdown file is imported, a note is quick-added, and the run makes chunks, one summary per
 * document (the PDF's pages together, the note on its own) and one collection overview; a search
 * finds a fact of the PDF's second page, and nothing costs anything.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPdf } from "../importers/testing/media-fixtures";
import { templateSpec } from "../pipeline/templates";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { importFile } from "./imports";
import { addNote } from "./notes";
import { createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
const folder = mkdtempSync(path.join(tmpdir(), "synthex-documents-"));

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "documents@example.com", password: "documents-password-1" }));
  writeFileSync(
    path.join(folder, "lease.pdf"),
    await textPdf(["Lease agreement for the harbour office.\nTenant: Nordlicht GmbH.", "The monthly rent is 2,450 euros.\nThe lease ends on 31 March 2029."], { title: "Harbour lease" }),
  );
  writeFileSync(path.join(folder, "handbook.md"), "# Office handbook\n\nThe alarm code is changed every quarter by the facilities team.\n");
}, 60_000);
afterAll(async () => {
  await close?.();
  rmSync(folder, { recursive: true, force: true });
});

describe("documents template", () => {
  it("runs offline: pages and a note → chunks → a summary per document → a collection overview", async () => {
    const spec = templateSpec("documents", "folder");
    const { pipeline } = await createPipeline(db, workspaceId, { name: "docs", spec });
    const imported = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "docs", path: folder });
    expect(imported).toMatchObject({ format: "folder", skipped: 0 });
    expect(imported.added).toBe(3); // two PDF pages and the handbook
    const note = await addNote(db, { workspaceId, pipelineId: pipeline.id, source: "docs" }, { text: "Call the locksmith about the harbour office back door.", title: "Todo" });
    expect(note).toMatchObject({ added: true, runRequested: true });

    // The note asked for the incremental run (it covers the import too); then nothing is left to do.
    await settleBackgroundWork();
    for (const deadline = Date.now() + 120_000; await db.run.findFirst({ where: { pipelineId: pipeline.id, status: { in: ["queued", "running"] } } }); ) {
      if (Date.now() > deadline) throw new Error("the requested run did not finish in 120 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    const run = await db.run.findFirstOrThrow({ where: { pipelineId: pipeline.id }, orderBy: { createdAt: "desc" } });
    expect(run.status).toBe("completed");
    expect((await runPipeline(db, { workspaceId, pipelineId: pipeline.id })).status).toBe("completed");
    const stats = run.stats as { steps: Array<{ step: string; errors: number; costUsd: number }> };
    for (const step of spec.steps) {
      expect(stats.steps.find((s) => s.step === step.name), `${step.name} ran`).toMatchObject({ errors: 0, costUsd: 0 });
    }
    const count = (step: string) => db.record.count({ where: { pipelineId: pipeline.id, step } });
    expect(await count("chunks")).toBeGreaterThanOrEqual(4);
    // One summary per document: the lease (both pages), the handbook, the note.
    const summaries = await db.record.findMany({ where: { pipelineId: pipeline.id, step: "document-summaries" }, select: { content: true, metadata: true } });
    expect(summaries).toHaveLength(3);
    const lease = summaries.find((s) => /Nordlicht/.test(s.content));
    expect(lease, "the lease's summary").toBeTruthy();
    expect(lease!.content).toMatch(/2,450 euros|31 March 2029/);
    expect(summaries.filter((s) => /locksmith/.test(s.content))).toHaveLength(1);
    expect(await count("collection")).toBe(1);

    const found = await search(db, { workspaceId, pipelineId: pipeline.id, query: "monthly rent euros", mode: "fts", limit: 10 });
    expect(found.hits.some((h) => /2,450 euros/.test(h.content))).toBe(true);

    // Issue 48 item 12: the collection overview (a fold of every document) does not answer every
    // search with one hit that hides the rest ("also matches N lower"); what matches comes first.
    for (const query of ["monthly rent euros", "alarm code facilities", "locksmith back door"]) {
      const hybrid = await search(db, { workspaceId, pipelineId: pipeline.id, query, limit: 10 });
      const words = query.split(" ");
      for (const h of hybrid.hits.filter((x) => x.step === "collection")) expect(h.lowerHits, query).toEqual([]);
      expect(hybrid.hits[0]!.step, query).not.toBe("collection");
      // The page (a chunk) or its document's summary, with the matching words, is answered directly.
      const direct = hybrid.hits.find((h) => h.step !== "collection" && words.filter((w) => h.content.toLowerCase().includes(w)).length >= 2);
      expect(direct, `${query}: a matching page among ${hybrid.hits.map((h) => h.step).join(", ")}`).toBeTruthy();
      expect(hybrid.hits.indexOf(direct!), query).toBe(0);
    }
  }, 240_000);
});
