/**
 * Issue 22, item 3: property-based fuzzing of the importers (fast-check). Real export fixtures are
 * truncated, have fields replaced with values of the wrong type, are nested thousands deep, and
 * carry huge strings; random JSON and random bytes are thrown at every format. Each input ends in
 * exactly one of: items (maybe with warnings, skipped ones flagged), or an ImportError that names
 * the file — never another exception. Through `importFile` on a real database, a failed import is
 * recorded as failed with its message, nothing is left "running", and every stored record is whole.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { ImportFailedError, importFile } from "../services/imports";
import { createPipeline, getBranch } from "../services/pipelines";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { detectFormat, ImportError, readImport, type ImportFormat } from "./index";

// CI runs one fixed seed, so a red run is reproducible and a green one stays green;
// FUZZ_SEED=<n> explores other inputs (a failure prints its seed and counterexample).
fc.configureGlobal({ seed: Number(process.env.FUZZ_SEED ?? 20261123) });

const FIX = path.join(import.meta.dirname, "__fixtures__");
const fixtures: Record<"chatgpt-export" | "claude-export" | "jsonl" | "markdown", string> = {
  "chatgpt-export": readFileSync(path.join(FIX, "chatgpt", "conversations.json"), "utf8"),
  "claude-export": readFileSync(path.join(FIX, "claude", "conversations.json"), "utf8"),
  jsonl: readFileSync(path.join(FIX, "chats.jsonl"), "utf8"),
  markdown: readFileSync(path.join(FIX, "transcript.md"), "utf8"),
};
const FORMATS = Object.keys(fixtures) as Array<keyof typeof fixtures>;
const EXT: Record<keyof typeof fixtures, string> = { "chatgpt-export": ".json", "claude-export": ".json", jsonl: ".jsonl", markdown: ".md" };

const tmp = mkdtempSync(path.join(tmpdir(), "synthex-fuzz-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let fileNo = 0;
function write(content: string | Buffer, ext: string): string {
  const file = path.join(tmp, `input-${++fileNo}${ext}`);
  writeFileSync(file, content);
  return file;
}

type Outcome = { kind: "items"; items: number; warnings: number; skipped: number } | { kind: "error"; message: string };

/** Runs an importer to the end; an ImportError is an answer, anything else thrown fails the property. */
async function outcome(file: string, format: ImportFormat): Promise<Outcome> {
  let items = 0;
  let warnings = 0;
  let skipped = 0;
  try {
    for await (const ev of readImport(file, format, { maxMessageChars: 50_000 })) {
      if ("item" in ev) {
        expect(typeof ev.item.content).toBe("string");
        expect(ev.item.content.length).toBeGreaterThan(0);
        // Messages are capped at 50 000 characters, titles at 500: no item grows with a huge field.
        expect(ev.item.content.length).toBeLessThanOrEqual(1_500_000);
        items++;
      } else {
        expect(typeof ev.warning.reason).toBe("string");
        expect(ev.warning.reason.length).toBeGreaterThan(0);
        warnings++;
        if (ev.warning.skipped) skipped++;
      }
    }
    return { kind: "items", items, warnings, skipped };
  } catch (err) {
    if (!(err instanceof ImportError)) throw new Error(`${format} importer crashed on ${path.basename(file)}: ${(err as Error)?.stack ?? String(err)}`);
    expect(err.message.length).toBeGreaterThan(10);
    return { kind: "error", message: err.message };
  }
}

// ------------------------------------------------------------------------------------------------
// Mutations of valid exports

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside a JSON document. */
function paths(value: Json, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function setAt(doc: Json, at: Array<string | number>, value: Json): Json {
  if (!at.length) return value;
  const copy = structuredClone(doc) as Record<string | number, Json>;
  let node = copy as Record<string | number, Json>;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[at.at(-1)!] = value;
  return copy as Json;
}

/** JSON text nested `depth` levels around `leaf` (built as text: JSON.stringify itself recurses). */
function deep(depth: number, leaf: string): string {
  let open = "";
  let close = "";
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? "[" : '{"nested":';
    close = (i % 2 ? "]" : "}") + close;
  }
  return open + leaf + close;
}

/** The document with the value at `at` replaced by raw JSON text. */
function withRawAt(doc: Json, at: Array<string | number>, raw: string): string {
  return JSON.stringify(setAt(doc, at, "__RAW_PLACEHOLDER__")).replace('"__RAW_PLACEHOLDER__"', () => raw);
}

const wrongValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.string(),
  fc.constant<Json>([]),
  fc.constant<Json>({}),
  fc.array(fc.jsonValue() as fc.Arbitrary<Json>, { maxLength: 3 }) as fc.Arbitrary<Json>,
  fc.constantFrom<Json>(-1, 1e308, "NaN", "2024-99-99T99:99:99Z", "\u0000", "\uD800"),
);

const jsonFormat = fc.constantFrom<"chatgpt-export" | "claude-export">("chatgpt-export", "claude-export");

describe("importers under fuzzing", () => {
  it("truncated files: an ImportError or the whole conversations before the cut, never a crash", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FORMATS), fc.double({ min: 0, max: 1, noNaN: true }), async (format, at) => {
        const text = fixtures[format];
        const cut = text.slice(0, Math.floor(text.length * at));
        await outcome(write(cut, EXT[format]), format);
      }),
      { numRuns: 150 },
    );
  });

  it("fields of the wrong type anywhere in an export: an error or a skip with a warning", async () => {
    await fc.assert(
      fc.asyncProperty(jsonFormat, fc.nat(), wrongValue, async (format, pick, value) => {
        const doc = JSON.parse(fixtures[format]) as Json;
        const all = paths(doc);
        const mutated = setAt(doc, all[pick % all.length]!, value);
        await outcome(write(JSON.stringify(mutated), ".json"), format);
      }),
      { numRuns: 200 },
    );
  });

  it("several wrong types at once, and JSONL lines of random JSON", async () => {
    await fc.assert(
      fc.asyncProperty(jsonFormat, fc.array(fc.tuple(fc.nat(), wrongValue), { minLength: 2, maxLength: 8 }), async (format, edits) => {
        let doc = JSON.parse(fixtures[format]) as Json;
        for (const [pick, value] of edits) {
          const all = paths(doc);
          doc = setAt(doc, all[pick % all.length]!, value);
        }
        await outcome(write(JSON.stringify(doc), ".json"), format);
      }),
      { numRuns: 100 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 10 }), async (lines) => {
        await outcome(write(lines.map((l) => JSON.stringify(l)).join("\n"), ".jsonl"), "jsonl");
      }),
      { numRuns: 100 },
    );
  });

  it("deep nesting (up to 20 000 levels) in place of a message or a whole export", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FORMATS), fc.integer({ min: 100, max: 20_000 }), fc.nat(), async (format, depth, pick) => {
        if (format === "markdown") {
          await outcome(write(`${"> ".repeat(depth)}User: hello\n${"#".repeat(depth % 200)} Assistant\n${"[".repeat(depth)}`, ".md"), format);
          return;
        }
        if (format === "jsonl") {
          await outcome(write(`{"messages":[{"role":"user","content":${deep(depth, '"hi"')}}]}\n${deep(depth, "1")}`, ".jsonl"), format);
          return;
        }
        const doc = JSON.parse(fixtures[format]) as Json;
        const all = paths(doc);
        await outcome(write(withRawAt(doc, all[pick % all.length]!, deep(depth, '"x"')), ".json"), format);
        await outcome(write(deep(depth, fixtures[format]), ".json"), format);
      }),
      { numRuns: 40 },
    );
  });

  it("huge strings (up to 8 MB) in content, titles and ids are kept with a truncation marker or skipped with a warning", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FORMATS), fc.integer({ min: 60_000, max: 8_000_000 }), fc.nat(), fc.constantFrom("a", "é", "😀", "\u0000", "\n"), async (format, size, pick, unit) => {
        const huge = unit.repeat(Math.ceil(size / unit.length));
        if (format === "markdown" || format === "jsonl") {
          const text = format === "jsonl" ? JSON.stringify({ messages: [{ role: "user", content: huge }] }) : `User: ${huge}\n\nAssistant: ok`;
          const result = await outcome(write(text, EXT[format]), format);
          if (result.kind === "items" && unit !== "\u0000" && unit !== "\n") expect(result.warnings).toBeGreaterThan(0);
          return;
        }
        const doc = JSON.parse(fixtures[format]) as Json;
        const strings = paths(doc).filter((p) => {
          let node: unknown = doc;
          for (const k of p) node = (node as Record<string | number, unknown>)[k];
          return typeof node === "string";
        });
        await outcome(write(JSON.stringify(setAt(doc, strings[pick % strings.length]!, huge)), ".json"), format);
      }),
      { numRuns: 30 },
    );
  }, 240_000);

  it("random bytes and random JSON under every format and under format detection", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 4000 }).map((b) => Buffer.from(b)), fc.jsonValue().map((j) => JSON.stringify(j))), fc.constantFrom(...FORMATS, "auto" as const), async (content, format) => {
        const file = write(content, format === "auto" ? ".json" : EXT[format]);
        if (format !== "auto") return void (await outcome(file, format));
        let detected: ImportFormat;
        try {
          detected = await detectFormat(file);
        } catch (err) {
          expect(err).toBeInstanceOf(ImportError);
          return;
        }
        await outcome(file, detected);
      }),
      { numRuns: 200 },
    );
  });
});

// ------------------------------------------------------------------------------------------------
// Through the import service on a real database: nothing half-written.

describe("importFile under fuzzing (PGlite)", () => {
  let db: Db;
  let close: () => Promise<void>;
  let workspaceId: string;
  let n = 0;
  beforeAll(async () => {
    ({ db, close } = await createTestDb());
    ({ workspace: { id: workspaceId } } = await signUp(db, { email: "fuzz@example.com", password: "fuzz-password-1" }));
  });
  afterAll(async () => close());

  it("a failed import is recorded as failed with its message; stored records are whole and counted; a retry adds no duplicates", async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(jsonFormat, fc.array(fc.tuple(fc.nat(), wrongValue), { minLength: 0, maxLength: 4 }), fc.double({ min: 0.2, max: 1, noNaN: true }), async (format, edits, keep) => {
        let doc = JSON.parse(fixtures[format]) as Json;
        for (const [pick, value] of edits) {
          const all = paths(doc);
          doc = setAt(doc, all[pick % all.length]!, value);
        }
        const text = JSON.stringify(doc);
        const file = write(keep < 0.6 ? text.slice(0, Math.floor(text.length * keep)) : text, ".json");
        const spec = new Pipeline("fuzz", { agent: "test" }).source("chats", { format }).toSpec();
        const { pipeline } = await createPipeline(db, workspaceId, { name: `fuzz${++n}`, spec });
        const stored = async () => {
          const { branch } = await getBranch(db, pipeline.id, "main");
          const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "chats" } });
          return db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } });
        };
        let added = 0;
        try {
          const result = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: file, format, batchSize: 1 });
          added = result.added;
          expect(result.status).toBe("completed");
        } catch (err) {
          if (!(err instanceof ImportFailedError)) throw err;
          failures.push(err.message);
          expect(err.message).toMatch(/\S/);
          added = err.stats.added;
        }
        const rows = await db.sourceImport.findMany({ where: { pipelineId: pipeline.id } });
        expect(rows).toHaveLength(1);
        expect(["completed", "failed"]).toContain(rows[0]!.status);
        if (rows[0]!.status === "failed") expect(rows[0]!.error).toMatch(/\S/);
        const records = await stored();
        expect(records).toHaveLength(added);
        for (const r of records) {
          expect(r.content.length).toBeGreaterThan(0);
          expect(typeof r.metadata).toBe("object");
        }
        // The same file again: nothing new, whatever happened the first time.
        try {
          await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: file, format, batchSize: 1 });
        } catch (err) {
          if (!(err instanceof ImportFailedError)) throw err;
        }
        expect(await stored()).toHaveLength(added);
      }),
      { numRuns: 30 },
    );
    // The fuzzer did reach the failure path, not only clean imports.
    expect(failures.length).toBeGreaterThan(0);
  }, 300_000);
});
