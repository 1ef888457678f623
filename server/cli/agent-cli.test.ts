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
});
