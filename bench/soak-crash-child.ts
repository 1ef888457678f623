/**
 * The database owner of `npm run soak:crash` (run with `node --import tsx`): it owns the embedded
 * PGlite directory in SYNTHEX_DATA_DIR, as `npm start` does, and executes runs in-process. The
 * soak kills it with SIGKILL mid-run. Prints one JSON line per event.
 *
 *   prepare <conversations>     migrate, a user, a chat-memory pipeline, a generated ChatGPT export imported
 *   run <pipelineId>            resume a run a killed owner left (once its lease expires), then run again to the end
 *   inspect <pipelineId>        the records main shows, duplicates, and runs by status
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { openMigratedDb } from "../server/store/runtime-env";
import { closeDb } from "../server/store/db";
import { signUp } from "../server/services/users";
import { createPipeline, getBranch, templateSpec } from "../server/services/pipelines";
import { importFile } from "../server/services/imports";
import { executeRunRow, runPipeline } from "../server/services/runs";
import { claimRunLease, expiredRunLeases, processLeaseOwner, runLeaseMs } from "../server/store/run-lease";

const [mode, arg = ""] = process.argv.slice(2);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const TOPICS = ["lighthouse", "sourdough", "tokio", "balcony herbs", "train to Lyon", "borrow checker", "vector index", "tax return", "marathon plan", "piano scales"];

/** A ChatGPT export of `n` short conversations, deterministic (the clean run and every trial see the same data). */
function generatedExport(n: number): unknown[] {
  const day = 86_400;
  return Array.from({ length: n }, (_, i) => {
    const topic = TOPICS[i % TOPICS.length]!;
    const t0 = 1_704_067_200 + i * 3 * day; // from 2024-01-01, every three days: several months
    const turns = [
      ["user", `Conversation ${i} about ${topic}: I decided to try plan ${i % 7} on day ${i}.`],
      ["assistant", `Noted: plan ${i % 7} for ${topic}. Remember that step ${i % 5} matters most.`],
      ["user", `Also, my reference number for ${topic} is ${1000 + i}.`],
      ["assistant", `Reference ${1000 + i} saved for ${topic}.`],
    ];
    const mapping: Record<string, unknown> = { root: { id: "root", message: null, parent: null, children: ["m0"] } };
    turns.forEach(([role, text], k) => {
      mapping[`m${k}`] = {
        id: `m${k}`,
        parent: k === 0 ? "root" : `m${k - 1}`,
        children: k < turns.length - 1 ? [`m${k + 1}`] : [],
        message: { id: `m${k}`, author: { role, name: null, metadata: {} }, create_time: t0 + k * 60, content: { content_type: "text", parts: [text] }, status: "finished_successfully", weight: 1, metadata: {}, recipient: "all" },
      };
    });
    return { id: `soak-${i}`, conversation_id: `soak-${i}`, title: `${topic} #${i}`, create_time: t0, update_time: t0 + 600, current_node: `m${turns.length - 1}`, mapping };
  });
}

async function main() {
  const db = await openMigratedDb();
  if (mode === "prepare") {
    const { workspace } = await signUp(db, { email: "soak@example.com", password: "soak-password-1" });
    const { pipeline } = await createPipeline(db, workspace.id, { name: "soak", spec: templateSpec("chat-memory") });
    const file = path.join(process.env.SYNTHEX_DATA_DIR!, "..", "export.json");
    writeFileSync(file, JSON.stringify(generatedExport(Number(arg) || 40)));
    const imported = await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: file });
    print({ event: "prepared", workspaceId: workspace.id, pipelineId: pipeline.id, added: imported.added });
  } else if (mode === "run") {
    const pipeline = await db.pipeline.findUniqueOrThrow({ where: { id: arg } });
    // A run the killed owner was executing: its lease expires, then this process claims and finishes it.
    const interrupted = await db.run.findMany({ where: { pipelineId: pipeline.id, status: { in: ["queued", "running"] } }, select: { id: true } });
    let resumed = 0;
    for (const { id } of interrupted) {
      const deadline = Date.now() + runLeaseMs() * 3 + 5_000;
      while (!(await expiredRunLeases(db, 100)).includes(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      if (!(await claimRunLease(db, id, processLeaseOwner, runLeaseMs()))) throw new Error(`could not claim interrupted run ${id}`);
      print({ event: "resuming", runId: id });
      await executeRunRow(db, id);
      resumed++;
    }
    print({ event: "started" });
    const run = await runPipeline(db, { workspaceId: pipeline.workspaceId, pipelineId: pipeline.id });
    print({ event: "done", runId: run.id, status: run.status, resumed });
  } else if (mode === "inspect") {
    const { branch } = await getBranch(db, arg, "main");
    const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id }, select: { step: true, recordId: true } });
    const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, select: { id: true, step: true, content: true } });
    // Two pointers to one record, or two records of one step with the same content, are duplicates.
    const seenPointers = new Set<string>();
    let duplicatePointers = 0;
    for (const p of pointers) {
      const key = `${p.step}\u0000${p.recordId}`;
      if (seenPointers.has(key)) duplicatePointers++;
      seenPointers.add(key);
    }
    const seenContent = new Set<string>();
    let duplicateContent = 0;
    for (const r of records) {
      const key = `${r.step}\u0000${r.content}`;
      if (seenContent.has(key)) duplicateContent++;
      seenContent.add(key);
    }
    const runs = await db.run.groupBy({ by: ["status"], where: { pipelineId: arg }, _count: true });
    print({
      event: "inspected",
      // Compared by what they are (step and content): ids, and keys built from parents' ids, differ between two runs.
      records: records.map((r) => `${r.step}:${createHash("sha256").update(r.content).digest("hex").slice(0, 16)}`).sort(),
      duplicates: duplicatePointers + duplicateContent,
      runs: Object.fromEntries(runs.map((r) => [r.status, r._count])),
    });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await closeDb();
}

main().catch((err: unknown) => {
  print({ event: "error", message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
