/**
 * The agent-API commands of the CLI on the embedded database, run as a person would: ask (an
 * answer packet), purge (dry run, then the real one) and keys (create, list, revoke).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-agent-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

describe("synthex ask", () => {
  it("answers with cited evidence and its sources, and abstains when the memory has nothing", { timeout: 600_000 }, async () => {
    expect((await synthex("init", "memory", "--from", FIXTURE)).code).toBe(0);
    expect((await synthex("run")).code).toBe(0);

    const asked = await synthex("ask", "Where is the spare key for the lighthouse cabin?");
    expect(asked.err).toBe("");
    expect(asked.code).toBe(0);
    expect(asked.out).toMatch(/^Answer: .*blue ceramic frog.*\[\d\]/);
    expect(asked.out).toMatch(/Extractive answer/);
    expect(asked.out).toMatch(/critic: APPROVE/);
    expect(asked.out).toMatch(/sources: chats /);

    const packet = JSON.parse((await synthex("ask", "zeppelin franchise revenue", "--json")).out) as { abstained: boolean; answer: string | null };
    expect(packet).toMatchObject({ abstained: true, answer: null });
    expect((await synthex("ask", "zeppelin franchise revenue")).out).toMatch(/^Abstained: /);
  });

  it("purge: --dry-run lists the cascade, the purge deletes it and the memory no longer answers", { timeout: 600_000 }, async () => {
    const hits = JSON.parse((await synthex("search", "blue ceramic frog", "--exact", "--json")).out).hits as Array<{ id: string; step: string }>;
    const source = hits.find((h) => h.step === "chats")!;
    const dry = await synthex("purge", source.id, "--dry-run");
    expect(dry.err).toBe("");
    expect(dry.out).toMatch(/^Dry run: would delete \d+ record\(s\) \(chats 1, /);
    expect(dry.out).toMatch(/branch pointers: main \d+/);
    const dryJson = JSON.parse((await synthex("purge", source.id, "--dry-run", "--json")).out) as { records: Array<{ id: string }> };

    const real = await synthex("purge", source.id);
    expect(real.err).toBe("");
    expect(real.out).toMatch(new RegExp(`^Deleted ${dryJson.records.length} record\\(s\\)`));
    expect(real.out).toMatch(/Audit entry \w+/);
    const after = JSON.parse((await synthex("ask", "Where is the spare key for the lighthouse cabin?", "--json")).out) as { answer: string | null };
    expect(after.answer ?? "").not.toMatch(/ceramic frog/);
    const scoped = await synthex("purge", "--scope", "acme:user-42", "--dry-run");
    expect(scoped.out).toMatch(/^Dry run: would delete 0 record\(s\)\./);
    expect((await synthex("purge", "--scope", "acme:user-42")).out).toMatch(/^Deleted 0 record\(s\)\./);
    const none = await synthex("purge");
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/record id or --scope/);
  });

  it("keys create prints a restricted key once; keys list shows it without the secret; keys revoke ends it", { timeout: 600_000 }, async () => {
    const created = await synthex("keys", "create", "eng-agent", "--read-only", "--scope", "acme:eng", "--pipeline", "memory");
    expect(created.err).toBe("");
    expect(created.out).toMatch(/^Created key "eng-agent" \(editor, read-only, scope acme:eng, pipelines memory\)\.\nsx_\S+\n/);
    const secret = created.out.split("\n")[1]!;

    const list = await synthex("keys", "list");
    expect(list.out).toMatch(/eng-agent .*read-only, scope acme:eng, pipelines memory .*active/);
    // Who made each key (issue 30): the CLI's local member here.
    expect(list.out).toMatch(/created by[\s\S]*eng-agent .* cli@synthex\.local /);
    expect(list.out).not.toContain(secret);
    const [key] = JSON.parse((await synthex("keys", "list", "--json")).out) as Array<{ id: string; revokedAt: string | null }>;

    const bad = await synthex("keys", "create", "x", "--pipeline", "nope");
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/no pipeline "nope"/);

    expect((await synthex("keys", "revoke", key!.id)).out).toBe(`Revoked key ${key!.id}.`);
    expect((await synthex("keys", "list")).out).toMatch(/eng-agent .*revoked/);
  });
});
