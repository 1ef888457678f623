/**
 * Reads search and the eval rank with must give one answer whatever plan the database picks and
 * whatever order its rows happen to be stored in (record ids are random, so they must not decide
 * either): a record's sources in input order (the context bonus takes the first that is a
 * candidate), the group a walk reaches a record from, the records a bm25 eval ranks, the entities
 * and beliefs graph retrieval reads up to a cap, and the term statistics of several steps. Each
 * read runs with tables read only sequentially (rows in stored order) and only through indexes,
 * over rows stored in an order that differs from the intended one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { signUp } from "../services/users";
import { beliefsTouching, entitiesNamed } from "./graph-retrieval-reads";
import { termStatRows } from "./lexical-index";
import { branchStepRecords, parentRowsOfStep } from "./provenance-reads";
import { candidateShapes } from "./search-reads";
import { createTestDb } from "./test-db";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
let branchId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "search-order@example.com", password: "search-order-password" }));
  const spec = new Pipeline("order", { agent: "test" }).source("notes", { format: "jsonl" }).output("search", { from: ["notes"], surface: "search" }).toSpec();
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "order", spec }));
  branchId = (await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" }, select: { id: true } })).id;
});
afterAll(async () => close());

/** Source records of one scope: their ids and content keys, in the order given. */
async function notes(scope: string, contents: string[], metadata: (i: number) => Record<string, unknown> = () => ({})) {
  await appendSourceRecords(
    db,
    pipelineId,
    "notes",
    contents.map((content, i) => ({ externalId: `${scope}-${i}`, content, scope, metadata: metadata(i) })),
  );
  const rows = await db.record.findMany({ where: { pipelineId, scope }, select: { id: true, content: true, contentFingerprint: true, materializationKey: true } });
  return contents.map((c) => {
    const r = rows.find((x) => x.content === c)!;
    return { id: r.id, key: `${r.contentFingerprint} ${r.materializationKey}` };
  });
}

/**
 * Of `made`, a record with the least content key and the greatest id among the chosen ones (the
 * others: those of smaller id and greater key), so an order by id and one by key disagree.
 */
function keyAgainstId<T extends { id: string; key: string }>(made: T[]): { least: T; chosen: T[] } {
  const byIdDesc = [...made].sort((x, y) => (x.id < y.id ? 1 : -1));
  const pick = byIdDesc.map((k) => ({ k, others: made.filter((g) => g.id < k.id && g.key > k.key) })).find((c) => c.others.length >= 2);
  if (!pick) throw new Error("no record whose key and id orders disagree: add records");
  return { least: pick.k, chosen: [...pick.others, pick.k] };
}

/** Provenance edges, stored in the order given. */
async function edges(list: Array<{ parent: string; child: string; position: number }>) {
  for (const e of list) {
    await db.$executeRawUnsafe(`INSERT INTO "RecordEdge" ("workspaceId", "parentId", "childId", position) VALUES ($1, $2, $3, $4)`, workspaceId, e.parent, e.child, e.position);
  }
}

/** `read` with tables read only sequentially (rows in stored order), then through indexes only: both answers. */
async function bothPlans<T>(read: (db: Db) => Promise<T>): Promise<[T, T]> {
  const run = (settings: string[]) =>
    db.$transaction(async (tx) => {
      for (const s of settings) await tx.$executeRawUnsafe(`SET LOCAL ${s}`);
      return read(tx as unknown as Db);
    });
  return [await run(["enable_indexscan = off", "enable_indexonlyscan = off", "enable_bitmapscan = off"]), await run(["enable_seqscan = off"])];
}

describe("search reads do not depend on the plan or the stored order", () => {
  it("a candidate's sources come in input order, not in the order the edges were stored or indexed", async () => {
    const [child, a, b] = await notes("shapes", ["a window of the talk", "the first source", "the second source"]);
    // The source stored first (and the smaller id, which the edge index is ordered by) is the child's second input.
    const [low, high] = [a!, b!].sort((x, y) => (x.id < y.id ? -1 : 1));
    await edges([
      { parent: low!.id, child: child!.id, position: 1 },
      { parent: high!.id, child: child!.id, position: 0 },
    ]);
    const [seq, index] = await bothPlans((d) => candidateShapes(d, workspaceId, [child!.id, low!.id, high!.id]));
    expect(seq.get(child!.id)!.parents).toEqual([high!.id, low!.id]);
    expect(index.get(child!.id)!.parents).toEqual([high!.id, low!.id]);
  });

  it("a record reached from several groups at the same input position names the same group whatever order the edges were stored in", async () => {
    const made = await notes(
      "groups",
      Array.from({ length: 12 }, (_, i) => `group summary ${i}`),
    );
    // The groups: one with the least content key and the greatest id among them (ids decide nothing).
    const { least, chosen: groups } = keyAgainstId(made);
    const [first, second] = await notes("members", ["member one", "member two"]);
    // Every group has both members as its inputs 0 and 1: member one's edges stored in one order, member two's in the other.
    await edges(groups.map((g) => ({ parent: first!.id, child: g.id, position: 0 })));
    await edges([...groups].reverse().map((g) => ({ parent: second!.id, child: g.id, position: 1 })));
    const [seq, index] = await bothPlans((d) => parentRowsOfStep(d, { workspaceId, branchId, step: "notes", children: groups.map((g) => g.id) }));
    for (const rows of [seq, index]) {
      const reached = new Map(rows.map((r) => [r.id, r.parentId]));
      expect(reached.get(first!.id)).toBe(least.id);
      // Member two is each group's second input: the same rule picks the same group.
      expect(reached.get(second!.id)).toBe(least.id);
    }
  });

  it("records of one time rank in their split order for a bm25 eval, not by their random ids", async () => {
    const contents = Array.from({ length: 8 }, (_, i) => `window ${i} of the session`);
    const stored = await notes("windows", contents, (i) => ({ time: { created_at: "2023-05-08T13:56:00Z" }, step: { index: i } }));
    // The ids' order is random; the split index is the order the session was cut in.
    expect(stored.map((s) => s.id)).not.toEqual([...stored].map((s) => s.id).sort());
    const [seq, index] = await bothPlans((d) => branchStepRecords(d, { workspaceId, pipelineId, branch: "main", step: "notes", scope: "windows" }));
    expect(seq.map((r) => r.content)).toEqual(contents);
    expect(index.map((r) => r.content)).toEqual(contents);
  });
  it("graph retrieval's capped reads of entities and beliefs keep the same ones whatever their ids", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `Person${i}`);
    const people = await notes("people", names.map((n) => `${n} is a person`), (i) => ({ custom: { entity: { id: `ent_${i}`, name: names[i], aliases: [], type: "person" } } }));
    const ents = keyAgainstId(people.map((p, i) => ({ ...p, name: names[i]!.toLowerCase() })));
    const where = { workspaceId, branchId, steps: ["notes"], scope: "people" };
    const [seq, index] = await bothPlans((d) => entitiesNamed(d, { ...where, phrases: ents.chosen.map((e) => e.name), cap: 1 }));
    expect(seq.map((r) => r.recordId)).toEqual([ents.least.id]);
    expect(index.map((r) => r.recordId)).toEqual([ents.least.id]);

    // Beliefs of equal status and valid time, one per subject entity: the cap keeps the least content key.
    const said = await notes("beliefs", names.map((n) => `${n} likes tea`), (i) => ({
      custom: { belief: { id: `bel_${i}`, subject: `ent_${i}`, predicate: "likes", object: "tea", status: "current", validFrom: "2023-05-08T00:00:00Z" } },
    }));
    const bels = keyAgainstId(said.map((b, i) => ({ ...b, subject: `ent_${i}` })));
    const beliefs = { workspaceId, branchId, steps: ["notes"], scope: "beliefs", entityIds: bels.chosen.map((b) => b.subject), exclude: [], cap: 1 };
    const [bSeq, bIndex] = await bothPlans((d) => beliefsTouching(d, beliefs));
    expect(bSeq.map((r) => r.recordId)).toEqual([bels.least.id]);
    expect(bIndex.map((r) => r.recordId)).toEqual([bels.least.id]);
  });
  it("term statistics come by step whatever order they were stored in (of steps of equal size, search weighs query words by the first)", async () => {
    for (const step of ["zeta", "alpha"]) {
      await db.$executeRawUnsafe(
        `INSERT INTO "SearchStepStat" ("workspaceId", "branchId", step, docs, "avgLength", signature) VALUES ($1, $2, $3, 10, 5, 'test')`,
        workspaceId,
        branchId,
        step,
      );
      await db.$executeRawUnsafe(`INSERT INTO "SearchTermStat" ("workspaceId", "branchId", step, term, df) VALUES ($1, $2, $3, 'tea', 2), ($1, $2, $3, 'cake', 3)`, workspaceId, branchId, step);
    }
    const [seq, index] = await bothPlans((d) => termStatRows(d, branchId, ["zeta", "alpha"], ["tea", "cake"]));
    const expected = [
      ["alpha", "cake"],
      ["alpha", "tea"],
      ["zeta", "cake"],
      ["zeta", "tea"],
    ];
    expect(seq.map((r) => [r.step, r.term])).toEqual(expected);
    expect(index.map((r) => [r.step, r.term])).toEqual(expected);
  });
});
