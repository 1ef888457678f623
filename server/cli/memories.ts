/**
 * `synthex memories deleted|history|restore`: the memories a consolidate step keeps, through the
 * same tRPC procedures (and permission checks) as the web app and REST.
 */
import type { Command } from "commander";
import type { BranchCliDeps, BranchGlobalOptions } from "./branch";
import type { RouterOutputs } from "./api";
import { table } from "./output";

const print = (opts: BranchGlobalOptions, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());
const oneLine = (text: string, max = 90) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A memory's versions, newest first: what it said, when, and the fact that changed it. */
export function formatHistory(h: RouterOutputs["record"]["history"]): string {
  const lines = [
    `memory ${h.memoryId} · ${h.step} · scope ${h.scope || "(none)"} · branch ${h.branch}: ${h.status}${h.restorable ? ` (restore with: synthex memories restore ${h.headRecordId})` : ""}`,
    "",
  ];
  for (const v of h.versions) {
    lines.push(`v${v.version} ${v.event.padEnd(7)} ${v.at}  ${oneLine(v.content)}`);
    lines.push(`           ${v.fact ? `fact ${v.fact.id}: ${oneLine(v.fact.content, 70)}` : v.by ? `by ${v.by}` : ""}${v.reason ? ` — ${oneLine(v.reason, 70)}` : ""}`);
  }
  return lines.join("\n");
}

export function registerMemoryCommands(program: Command, deps: Pick<BranchCliDeps, "action" | "fail" | "pipelineName">) {
  const { action, pipelineName } = deps;
  const memories = program.command("memories").description("the memories of a consolidate step: deleted ones, a memory's history, restore");

  memories
    .command("deleted")
    .description("the deleted memories of a consolidate step on the branch (newest first)")
    .requiredOption("--step <name>", "the consolidate step")
    .option("--scope <prefix>", "only this scope and the scopes under it")
    .action(
      action(async (conn, opts) => {
        const o = opts as BranchGlobalOptions & { step: string; scope?: string };
        const rows = await conn.api.record.deletedMemories.query({ workspaceId: conn.workspaceId, pipelineId: pipelineName(opts), branch: opts.branch, step: o.step, scope: o.scope });
        print(opts, rows, () =>
          rows.length
            ? table(rows.map((r) => ({ record: r.recordId, memory: r.memoryId, scope: r.scope, deleted: r.deletedAt, content: oneLine(r.content, 60) })))
            : `No deleted memories in ${o.step} on ${opts.branch}.`,
        );
      }),
    );

  memories
    .command("history <id>")
    .description("every version of a memory (any of its record ids): what it said, when, which fact changed it")
    .action(
      action(async (conn, opts, id: string) => {
        const history = await conn.api.record.history.query({ workspaceId: conn.workspaceId, id, branch: opts.branch });
        print(opts, history, () => formatHistory(history));
      }),
    );

  memories
    .command("restore <id>")
    .description("restore a deleted memory on the branch (a new version; the deletion stays in its history)")
    .action(
      action(async (conn, opts, id: string) => {
        const history = await conn.api.record.restore.mutate({ workspaceId: conn.workspaceId, id, branch: opts.branch });
        print(opts, history, () => `Restored memory ${history.memoryId} on ${history.branch}.\n\n${formatHistory(history)}`);
      }),
    );
}
