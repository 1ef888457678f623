/**
 * npm run bench:facts-commit — a split (facts) step over long sessions on the embedded database: the
 * step's time, the time its batches spent committing, and the audit bytes stored per fact (issue 48
 * item 5: each fact carried its whole session's prompt and response). Prints numbers with the load
 * average; asserts nothing. Usage: npm run bench:facts-commit -- [sessions] [turns]   (default 40 60)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { OfflineModel } from "../server/llm/offline-model";
import { Pipeline } from "../server/pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import type { SourceItem } from "../server/core/source-item";

const [sessions = 40, turns = 60] = process.argv.slice(2).map(Number).filter(Boolean);
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-bench-facts-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

function items(): SourceItem[] {
  return Array.from({ length: sessions }, (_, s) => ({
    externalId: `session-${s}`,
    content: Array.from({ length: turns }, (_, t) => `${t % 2 ? "Melanie" : "Caroline"}: I adopted a dog named Rex${t} in town ${t % 37} after the spring of ${2000 + (t % 20)}.`).join("\n"),
    scope: `user:${s % 5}`,
    metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1) + s * 86_400_000).toISOString() } },
  }));
}

async function main() {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "bench@example.com", password: "bench-password" });
  const spec = new Pipeline("facts-bench", {})
    .source("chats", { format: "jsonl" })
    .split("facts", { from: "chats", prompt: "List every fact of this session: {{ record.content }}" })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspace.id, { name: "facts-bench", spec });
  await appendSourceRecords(db, pipeline.id, "chats", items());
  // The commit's share: the time from a batch's last model answer to its progress event.
  let lastAnswer = 0;
  let commitMs = 0;
  const model = new OfflineModel();
  const timed = { complete: async (r: Parameters<OfflineModel["complete"]>[0]) => {
    const out = await model.complete(r);
    lastAnswer = Date.now();
    return out;
  } };
  const started = Date.now();
  const run = await runPipeline(
    db,
    { workspaceId: workspace.id, pipelineId: pipeline.id },
    { model: timed, onEvent: (e) => {
      if (e.type === "step-progress" && lastAnswer) commitMs += Date.now() - lastAnswer;
      lastAnswer = 0;
    } },
  );
  const ms = Date.now() - started;
  if (run.status !== "completed") console.log(`run ${run.status}: ${run.error ?? "no reason given"}`);
  const [row] = await db.$queryRawUnsafe<Array<{ n: number; audit: number; content: number }>>(
    `SELECT count(*)::int AS n, COALESCE(sum(octet_length(audit::text)), 0)::float8 AS audit, COALESCE(sum(octet_length(content)), 0)::float8 AS content
     FROM "Record" WHERE "pipelineId" = $1 AND step = 'facts'`,
    pipeline.id,
  );
  console.log(
    `facts step: ${sessions} sessions x ${turns} turns -> ${row!.n} facts, run ${run.status} in ${(ms / 1000).toFixed(1)} s, ` +
      `commits ~${(commitMs / 1000).toFixed(1)} s; audit ${(row!.audit / row!.n).toFixed(0)} B/fact (${(row!.audit / 1e6).toFixed(1)} MB) vs content ${(row!.content / row!.n).toFixed(0)} B/fact · load ${load()}`,
  );
  await closeDb();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dataDir, { recursive: true, force: true }));
