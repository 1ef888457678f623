/**
 * `synthex watch`: files dropped, renamed, rewritten and half-written into a temp folder, imported
 * by the real importer into a real (PGlite) database — exactly one import for each new content,
 * none for a rename or a deletion, and a deleted file's records stay.
 */
import { appendFile, mkdtemp, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPdf } from "../importers/testing/media-fixtures";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { createTestDb } from "../store/test-db";
import { importFile } from "./imports";
import { createPipeline } from "./pipelines";
import { signUp } from "./users";
import { watchFolder, type WatchEvent } from "./watch-folder";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let dir: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "watch@example.com", password: "watch-password-1" }));
  dir = await mkdtemp(path.join(tmpdir(), "synthex-watch-"));
}, 60_000);
afterAll(async () => {
  await close?.();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("watchFolder", () => {
  it("imports each new content exactly once: drop, rename, rewrite, half-write, delete", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox", spec: ragBaselineSpec("folder") });
    const imports: string[] = [];
    const events: WatchEvent[] = [];
    await writeFile(path.join(dir, "before.md"), "# Before\nwritten before the watch began");
    const watcher = watchFolder(dir, {
      stableMs: 400,
      onEvent: (e) => events.push(e),
      importOne: async (file) => {
        imports.push(path.basename(file));
        return importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: file, actor: "user:watch" });
      },
    });
    const settle = async () => {
      await sleep(1200);
      await watcher.idle();
    };
    try {
      await watcher.ready;
      expect(imports).toEqual(["before.md"]);

      // Dropped.
      await writeFile(path.join(dir, "plan.md"), "# Plan\nrepaint the fence in May");
      await settle();
      expect(imports).toEqual(["before.md", "plan.md"]);

      // Renamed: same bytes, not imported again.
      await rename(path.join(dir, "plan.md"), path.join(dir, "plan-2025.md"));
      await settle();
      expect(imports).toEqual(["before.md", "plan.md"]);
      expect(events).toContainEqual({ kind: "unchanged", file: "plan-2025.md", sameAs: "plan.md" });

      // Rewritten: new bytes, imported once.
      await writeFile(path.join(dir, "plan-2025.md"), "# Plan\nrepaint the fence in June");
      await settle();
      expect(imports).toEqual(["before.md", "plan.md", "plan-2025.md"]);

      // Half-written: the first half, a pause shorter than the stability window, the rest — one import of the whole file.
      const pdf = Buffer.from(await textPdf(["Minutes", "The committee chose the orange logo."]));
      const half = Math.floor(pdf.length / 2);
      await writeFile(path.join(dir, "minutes.pdf"), pdf.subarray(0, half));
      await sleep(150);
      await appendFile(path.join(dir, "minutes.pdf"), pdf.subarray(half));
      await settle();
      expect(imports).toEqual(["before.md", "plan.md", "plan-2025.md", "minutes.pdf"]);
      expect(events.filter((e) => e.kind === "failed")).toEqual([]);
      expect(await db.record.count({ where: { pipelineId: pipeline.id, step: "chats", content: { contains: "orange logo" } } })).toBe(1);

      // Deleted: reported, records kept.
      const before = await db.record.count({ where: { pipelineId: pipeline.id } });
      await unlink(path.join(dir, "minutes.pdf"));
      await settle();
      expect(events).toContainEqual({ kind: "deleted", file: "minutes.pdf" });
      expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(before);
      expect(imports).toHaveLength(4);

      // A partial download and a hidden file are never read.
      await writeFile(path.join(dir, "big.pdf.part"), "partial");
      await writeFile(path.join(dir, ".DS_Store"), "x");
      await settle();
      expect(imports).toHaveLength(4);
      expect(await db.sourceImport.count({ where: { pipelineId: pipeline.id } })).toBe(4);
    } finally {
      await watcher.close();
    }
  }, 60_000);
});
