import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { analyzeImports, layerOf, rawSqlOutsideStore } from "./import-graph";

const repo = path.resolve(import.meta.dirname, "..");

describe("layers point down (the repository)", () => {
  const report = analyzeImports(repo);

  it("every product file has a layer", () => {
    expect(report.unlayered).toEqual([]);
    expect(report.files.length).toBeGreaterThan(100);
  });

  it("no import points to the same or a higher layer (outside its own folder)", () => {
    expect(report.upward.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it("no folder-level cycle (engine <-> llm, services <-> search, …)", () => {
    expect(report.folderCycles).toEqual([]);
  });

  it("no run-time import cycle between files (static or dynamic import)", () => {
    expect(report.cycles).toEqual([]);
  });

  it("product code never imports test helpers", () => {
    expect(report.intoTests.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it("only the store's repositories run SQL (no $queryRaw/$executeRaw elsewhere in product code)", () => {
    expect(rawSqlOutsideStore(repo)).toEqual([]);
  });

  it("the bottom layers import nothing of ours above them", () => {
    for (const e of report.edges) {
      if (e.from.startsWith("server/core/")) expect(e.to.startsWith("server/core/") || e.to.startsWith("server/generated/")).toBe(true);
    }
    expect(layerOf("server/core/db.ts")!.rank).toBeLessThan(layerOf("server/store/db.ts")!.rank);
    expect(layerOf("server/store/db.ts")!.rank).toBeLessThan(layerOf("server/engine/runner.ts")!.rank);
    expect(layerOf("server/engine/runner.ts")!.rank).toBeLessThan(layerOf("server/services/runs.ts")!.rank);
    expect(layerOf("server/services/runs.ts")!.rank).toBeLessThan(layerOf("server/api/root.ts")!.rank);
  });
});

describe("the checker itself", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-layers-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  };

  it("finds an upward import, a cycle, a folder cycle and product code importing a test helper", () => {
    write("server/core/errors.ts", `export const x = 1;`);
    // store -> services: upward
    write("server/store/records.ts", `import { y } from "../services/runs";\nexport const r = y;`);
    write("server/services/runs.ts", `import { r } from "@/server/store/records";\nimport { e } from "./executor";\nexport const y = 1 + r + e;`);
    // run-time cycle inside services, through a dynamic import
    write("server/services/executor.ts", `export const e = 2;\nexport async function later() { return (await import("./runs")).y; }`);
    // a type-only cycle is not a run-time cycle
    write("server/pipeline/spec.ts", `import { v } from "./validate";\nexport type Spec = { a: number };\nexport const s = v;`);
    write("server/pipeline/validate.ts", `import type { Spec } from "./spec";\nexport const v = (x: Spec) => x;`);
    write("server/llm/bench.ts", `import { db } from "../store/test-db";\nexport const b = db;`);
    write("server/store/test-db.ts", `export const db = 1;`);
    write("server/mystery/thing.ts", `export const m = 1;`);
    write("server/search/sneaky.ts", "export const q = (db: any) => db.$queryRawUnsafe(`SELECT 1`);");

    const report = analyzeImports(dir);
    expect(report.upward.map((e) => `${e.from} -> ${e.to}`)).toEqual(["server/store/records.ts -> server/services/runs.ts"]);
    // One strongly connected component: store -> services -> store, and runs -> executor -(import())-> runs.
    expect(report.cycles).toEqual([["server/services/executor.ts", "server/services/runs.ts", "server/store/records.ts"]]);
    expect(report.folderCycles).toEqual([["server/services", "server/store"]]);
    expect(report.intoTests.map((e) => e.from)).toEqual(["server/llm/bench.ts"]);
    expect(report.unlayered).toEqual(["server/mystery/thing.ts"]);
    expect(rawSqlOutsideStore(dir)).toEqual(["server/search/sneaky.ts"]);
  });
});
