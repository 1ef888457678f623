/**
 * `synthex init --template memex`, run, search, and the memories commands (deleted, history,
 * restore) in this process on an embedded database.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chatgptExportOf, runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-memories-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

describe("synthex memories", () => {
  it("a memex pipeline deletes a memory a later conversation negates; the CLI lists, explains and restores it", async () => {
    const file = path.join(dir, "conversations.json");
    writeFileSync(
      file,
      JSON.stringify(
        chatgptExportOf([
          ["2024-03-01", "Moving", "I keep a saltwater aquarium with two clownfish.", "Clownfish are hardy; keep the salinity stable."],
          ["2024-04-01", "Update", "I no longer keep a saltwater aquarium with two clownfish.", "Rehoming fish takes care; a local club can help."],
        ]),
      ),
    );
    const init = await synthex("init", "memex-cli", "--template", "memex", "--from", file);
    expect(init.err).toBe("");
    expect(init.out).toMatch(/Created pipeline "memex-cli" \(memex\)/);
    const run = await synthex("run");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/completed/);

    const deleted = await synthex("memories", "deleted", "--step", "memories", "--json");
    expect(deleted.code).toBe(0);
    const rows = JSON.parse(deleted.out) as Array<{ recordId: string; content: string }>;
    // The offline fact extraction writes the speaker for "I": "user keeps …".
    expect(rows.map((r) => r.content)).toEqual([expect.stringContaining("user keeps a saltwater aquarium with two clownfish.")]);
    const tombstone = rows.find((r) => r.content.includes("aquarium"))!.recordId;

    const history = await synthex("memories", "history", tombstone);
    expect(history.code).toBe(0);
    expect(history.out).toMatch(/: deleted \(restore with: synthex memories restore /);
    expect(history.out).toMatch(/v2 DELETE/);
    expect(history.out).toMatch(/v1 ADD/);
    expect(history.out).toMatch(/fact .*: user no longer keeps a saltwater aquarium/);

    const hidden = await synthex("search", "saltwater aquarium clownfish", "--step", "memories", "--mode", "fts", "--json");
    expect((JSON.parse(hidden.out) as { hits: Array<{ content: string }> }).hits.some((h) => h.content.includes("user keeps a saltwater aquarium"))).toBe(false);

    const restore = await synthex("memories", "restore", tombstone);
    expect(restore.code).toBe(0);
    expect(restore.out).toMatch(/Restored memory mem-/);
    expect(restore.out).toMatch(/v3 RESTORE/);
    const found = await synthex("search", "saltwater aquarium clownfish", "--step", "memories", "--mode", "fts", "--json");
    expect((JSON.parse(found.out) as { hits: Array<{ content: string }> }).hits.some((h) => h.content.includes("user keeps a saltwater aquarium"))).toBe(true);

    const twice = await synthex("memories", "restore", tombstone);
    expect(twice.code).toBe(1);
    expect(twice.err).toMatch(/is not deleted on branch "main" \(it is current\)/);
    const notMemory = await synthex("memories", "history", "no-such-record");
    expect(notMemory.code).toBe(1);
    expect(notMemory.err).toMatch(/not found/);
  }, 300_000);
});
