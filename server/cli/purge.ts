/**
 * `synthex purge <id>` / `synthex purge --scope <prefix>`: deletes a record (or every record of a
 * scope) and everything derived from it on every branch, with the copies of its text elsewhere;
 * `--dry-run` lists what would go and deletes nothing.
 */
import type { Command } from "commander";
import type { BranchGlobalOptions } from "./branch";
import { resolvePipeline, type CommandDeps } from "./import";
import { num, print } from "./output";

export function registerPurgeCommand(program: Command, deps: CommandDeps) {
  const { action, fail, pipelineName } = deps;
  program
    .command("purge [id]")
    .description("delete a record (or --scope: every record of a scope) and everything derived from it, on every branch; --dry-run lists it")
    .option("--scope <prefix>", "purge a scope of the selected pipeline instead of one record")
    .option("--dry-run", "list what would be deleted, delete nothing")
    .action(
      action(async (conn, opts, id?: string) => {
        const o = opts as BranchGlobalOptions & { scope?: string; dryRun?: boolean };
        const dryRun = Boolean(o.dryRun);
        const result = o.scope
          ? await conn.api.record.purgeScope.mutate({ workspaceId: conn.workspaceId, pipelineId: (await resolvePipeline(conn, opts, deps)).pipeline.id, scope: o.scope, dryRun })
          : await conn.api.record.purge.mutate({ workspaceId: conn.workspaceId, id: id!, dryRun });
        print(opts, result, () => {
          const steps = Object.entries(result.byStep).map(([step, n]) => `${step} ${num(n)}`).join(", ");
          const pointers = Object.entries(result.pointers).map(([branch, n]) => `${branch} ${num(n)}`).join(", ");
          return [
            `${dryRun ? "Dry run: would delete" : "Deleted"} ${num(result.records.length)} record(s)${steps ? ` (${steps})` : ""}.`,
            `  branch pointers: ${pointers || "none"} · embeddings ${num(result.embeddings)} · search postings ${num(result.postings)} · edges ${num(result.edges)} · live sessions ${num(result.ingestSessions)} (${num(result.ingestMessages)} messages)`,
            `  copies of the text: eval cases ${num(result.copies.evalCases)} · run failures ${num(result.copies.runFailures)} (redacted) · webhook deliveries ${num(result.copies.webhookDeliveries)} (deleted) · question-set questions ${num(result.copies.questions)} · kept Idempotency-Key answers ${num(result.copies.idempotencyResponses)} (replaced by 410)`,
            dryRun ? `Purge with: synthex purge ${o.scope ? `--scope ${o.scope}` : id}` : `Audit entry ${result.auditId}. The next run rebuilds what depended on it from what is left.`,
          ].join("\n");
        });
      }, ([id], opts) => {
        if (!id === !opts.scope) fail("Name a record id or --scope <prefix> (one of them).", 2);
        if (opts.scope) pipelineName(opts);
      }),
    );
}
