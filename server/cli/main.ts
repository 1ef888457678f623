/**
 * `synthex`: the command line. Works on the embedded database by default (in a local workspace the
 * web app shows too), or against a running server with --url and an API key.
 *
 * This file is the command table (commander definitions and their wiring); each command's work
 * lives in server/cli/*.ts or a service. Command groups register themselves from their own modules
 * (import, watch, run/runs, purge, keys, branch, memories, eval, log and shadow), in help order.
 */
import { Command, Option } from "commander";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { TRPCClientError } from "@trpc/client";
import { TRPCError } from "@trpc/server";
import { TEMPLATE_IDS } from "../pipeline/templates";
import { IMPORT_FORMATS, type ImportFormat } from "../importers/types";
import { SOURCE_FORMATS, type SourceFormat } from "../pipeline/spec";
import type { LineageResult } from "../search/provenance";
import { describePath } from "../search/evidence-path";
import { SEARCH_MODES, type SearchMode } from "../search/modes";
import { connectLocal, connectRemote, type Connection } from "./api";
import { num, print, table, usd } from "./output";
import { fileImports, registerImportCommand, resolvePipeline as resolveSelectedPipeline } from "./import";
import { registerWatchCommand } from "./watch";
import { registerPurgeCommand } from "./purge";
import { registerRunCommands } from "./runs";
import { registerBranchCommands } from "./branch";
import { registerMemoryCommands } from "./memories";
import { registerEvalCommands } from "./eval";
import { registerKeyCommands } from "./keys";
import { registerLogCommands } from "./log";
import { timingMark } from "../core/timing";

interface GlobalOptions {
  pipeline?: string;
  branch: string;
  json?: boolean;
  url?: string;
  apiKey?: string;
}

const dataDir = () => process.env.SYNTHEX_DATA_DIR ?? ".synthex";
const configPath = () => path.join(dataDir(), "cli.json");

/** The selected pipeline, and the branch selected on it (`branch switch`). */
interface CliConfig {
  pipeline?: string;
  branch?: string;
}

function readConfig(): CliConfig {
  return existsSync(configPath()) ? JSON.parse(readFileSync(configPath(), "utf8")) : {};
}
function writeConfig(config: CliConfig) {
  mkdirSync(dataDir(), { recursive: true });
  writeFileSync(configPath(), JSON.stringify(config, null, 2));
}

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

async function connect(opts: GlobalOptions): Promise<Connection> {
  const url = opts.url ?? process.env.SYNTHEX_URL;
  if (url) {
    const key = opts.apiKey ?? process.env.SYNTHEX_API_KEY;
    if (!key) throw new CliError("--url needs an API key: pass --api-key or set SYNTHEX_API_KEY (Settings → API keys).", 2);
    return connectRemote(url, key);
  }
  return connectLocal();
}

function pipelineName(opts: GlobalOptions): string {
  const name = opts.pipeline ?? readConfig().pipeline;
  if (!name) throw new CliError("No pipeline selected. Run `synthex init <name>` or pass --pipeline <name>.", 2);
  return name;
}

/**
 * Opens the connection, runs the command, always closes, and turns errors into a message + exit
 * code. `check` runs before connecting, so a missing pipeline or file fails at once.
 */
function action<A extends unknown[]>(
  fn: (conn: Connection, opts: GlobalOptions, ...args: A) => Promise<void>,
  check?: (args: A, opts: GlobalOptions & Record<string, unknown>) => void,
) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const opts = command.optsWithGlobals() as GlobalOptions & Record<string, unknown>;
    // --branch, else the branch `branch switch` selected on the selected pipeline, else main.
    opts.branch = opts.branch ?? (opts.pipeline && opts.pipeline !== readConfig().pipeline ? undefined : readConfig().branch) ?? "main";
    let conn: Connection | undefined;
    try {
      check?.(args.slice(0, -1) as A, opts);
      conn = await connect(opts);
      timingMark("connected");
      await fn(conn, opts, ...(args.slice(0, -1) as A));
      timingMark("command done");
    } catch (err) {
      const message =
        err instanceof TRPCError || err instanceof TRPCClientError || err instanceof CliError || err instanceof Error
          ? err.message
          : String(err);
      console.error(`synthex: ${message}`);
      process.exitCode = err instanceof CliError ? err.exitCode : 1;
    } finally {
      await conn?.close().catch(() => {});
    }
  };
}

const resolvePipeline = (conn: Connection, opts: GlobalOptions) => resolveSelectedPipeline(conn, opts, { pipelineName });

/** For commands on the selected pipeline: fail before connecting when none is selected. */
const needsPipeline = (opts: GlobalOptions) => void pipelineName(opts);

export function buildCli() {
  const program = new Command("synthex")
    .description("Synthex: memory pipelines for AI agents")
    .option("-p, --pipeline <name>", "pipeline (default: the one `init` selected)")
    .option("-b, --branch <name>", "branch (default: the one `branch switch` selected, else main)")
    .option("--json", "machine-readable output")
    .option("--url <url>", "a running Synthex server (default: the embedded database)")
    .option("--api-key <key>", "API key for --url (or SYNTHEX_API_KEY)")
    .showHelpAfterError();
  const fail = (message: string, exitCode = 1): never => {
    throw new CliError(message, exitCode);
  };
  const deps = { action, fail, pipelineName };
  const { requireFile, importInto, reportImport } = fileImports(fail);

  program
    .command("init <name>")
    .description("create a pipeline from a template (default: chat-memory), optionally importing a file")
    .option("--from <file>", "chat export or transcript file to import")
    .addOption(new Option("--format <format>", "override format detection").choices(IMPORT_FORMATS))
    .addOption(new Option("--template <template>", "architecture").choices(TEMPLATE_IDS).default("chat-memory"))
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as GlobalOptions & { from?: string; format?: ImportFormat; template: string };
        let format = o.format;
        if (!format && o.from) {
          const { detectFormat } = await import("../importers");
          format = await detectFormat(o.from);
        }
        const created = await conn.api.pipeline.create.mutate({
          workspaceId: conn.workspaceId,
          name,
          template: o.template,
          // A document, image or audio file goes into a source that takes files.
          format: format && (SOURCE_FORMATS as readonly string[]).includes(format) ? (format as SourceFormat) : format ? "folder" : "chatgpt-export",
        });
        writeConfig({ ...readConfig(), pipeline: name, branch: undefined });
        const source = created.spec.sources[0]?.name ?? "chats";
        if (!opts.json) console.log(`Created pipeline "${name}" (${o.template}) and selected it.`);
        if (o.from) reportImport(opts, o.from, await importInto(conn, created.pipeline.id, source, o.from, format));
        if (!opts.json) console.log("Next: synthex plan   (what a run would do)   ·   synthex run");
      }, (_args, opts) => { if (typeof opts.from === "string") requireFile(opts.from); }),
    );

  program
    .command("pipelines")
    .description("list pipelines")
    .action(
      action(async (conn, opts) => {
        const list = await conn.api.pipeline.list.query({ workspaceId: conn.workspaceId });
        const current = readConfig().pipeline;
        print(opts, list, () =>
          table(list.map((p) => ({ "": p.name === current ? "*" : "", name: p.name, agent: p.agent, records: num(p.records), "last run": p.lastRun?.status ?? "-" }))),
        );
      }),
    );

  registerImportCommand(program, deps);
  registerWatchCommand(program, deps);

  program
    .command("status")
    .description("records per step and what is stale")
    .action(
      action(async (conn, opts) => {
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const status = await conn.api.pipeline.status.query({ workspaceId: conn.workspaceId, pipelineId: pipeline.id, branch: branch.name });
        const runs = await conn.api.run.list.query({ workspaceId: conn.workspaceId, pipelineId: pipeline.id });
        print(opts, { pipeline: pipeline.name, branch: branch.name, steps: status, lastRun: runs[0] ?? null }, () =>
          [
            `Pipeline ${pipeline.name} · branch ${branch.name} · last run: ${runs[0] ? `${runs[0].status} (${runs[0].id})` : "never"}`,
            table(status.map((s) => ({ step: s.name, records: num(s.records), stale: s.stale ? num(s.stale) : "" }))),
          ].join("\n"),
        );
      }, (_args, opts) => needsPipeline(opts)),
    );

  program
    .command("plan")
    .description("what a run would do, per step, with estimated tokens and cost")
    .option("--full", "plan a full rebuild")
    .action(
      action(async (conn, opts) => {
        const o = opts as GlobalOptions & { full?: boolean };
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const input = { workspaceId: conn.workspaceId, pipelineId: pipeline.id, branch: branch.name, options: { full: o.full } };
        const plan = await conn.api.provider.planCost.query(input);
        print(opts, plan, () => {
          const rows = plan.steps.map((p) => ({
            step: p.step,
            type: p.type,
            records: `${p.estimated ? "≤" : ""}${num(p.pending)} of ${num(p.total)}`,
            "model calls": p.usesModel ? num(p.calls) : "",
            "tokens in": p.usesModel ? num(p.estimatedTokensIn) : "",
            "tokens out": p.usesModel ? num(p.estimatedTokensOut) : "",
            cost: p.usesModel ? `${usd(p.estimatedCostUsd)}${p.priceKnown ? "" : " (no price)"}` : "",
            estimate: !p.usesModel || p.calls === 0 ? "" : p.basis === "tokenizer" ? "tokenizer (no run yet)" : `${p.calibrationRuns} earlier run(s)${p.basis === "calibrated-prompt" ? ", same prompt" : ""}`,
          }));
          const lines = [`Pipeline ${pipeline.name} · branch ${branch.name}`, table(rows)];
          lines.push(
            `Estimated: ${num(plan.totals.pending)} item(s), ${num(plan.totals.estimatedTokensIn + plan.totals.estimatedTokensOut)} tokens, ${usd(plan.totals.estimatedCostUsd)}.`,
          );
          if (plan.costRatioVsMain !== undefined && plan.costRatioVsMain !== null) lines.push(`Full run vs main: ${plan.costRatioVsMain.toFixed(2)}x.`);
          if (plan.warning) lines.push(`Warning: ${plan.warning}`);
          lines.push("Run with: synthex run");
          return lines.join("\n");
        });
      }, (_args, opts) => needsPipeline(opts)),
    );

  registerRunCommands(program, deps);

  program
    .command("search <query>")
    .description("search memory at every altitude (or one step); --exact finds literal phrases in the raw sources")
    .option("--step <step>", "altitude: search one step")
    .addOption(new Option("--mode <mode>", "fts, semantic, hybrid or graph (walks the entity graph: pipelines with entities and relations steps)").choices([...SEARCH_MODES]).default("hybrid"))
    .option("--scope <prefix>", "scope prefix, e.g. acme:eng")
    .option("--exact", "literal phrase in source records")
    .option("--limit <n>", "results", "10")
    .action(
      action(async (conn, opts, query: string) => {
        const o = opts as GlobalOptions & { step?: string; mode: SearchMode; scope?: string; exact?: boolean; limit: string };
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const result = await conn.api.search.search.query({
          workspaceId: conn.workspaceId,
          pipelineId: pipeline.id,
          branch: branch.name,
          query,
          mode: o.mode,
          step: o.step,
          scope: o.scope,
          exact: Boolean(o.exact),
          limit: Number(o.limit) || 10,
        });
        print(opts, result, () => {
          if (result.hits.length === 0) return result.notice ?? `No results for "${query}".`;
          const lines = [`${result.hits.length} result(s) for "${query}" (${result.mode}${o.step ? `, step ${o.step}` : ""}):`, ""];
          if (result.graph) lines.splice(1, 0, graphLine(result.graph));
          for (const hit of result.hits) {
            lines.push(`${hit.step} · ${hit.id}${hit.scope ? ` · ${hit.scope}` : ""} · score ${hit.score.fused.toFixed(3)} · ${hit.sourceCount} source(s)`);
            lines.push(`  ${hit.snippet.replace(/\s+/g, " ").slice(0, 300)}`);
            for (const p of hit.evidencePaths ?? []) lines.push(`  via ${describePath(p)}`);
            if (hit.lowerHits.length) lines.push(`  also matched below: ${hit.lowerHits.map((l) => `${l.step} ${l.id}`).join(", ")}`);
            lines.push("");
          }
          lines.push("Drill down: synthex lineage <id>   ·   synthex get <id>");
          return lines.join("\n");
        });
      }, (_args, opts) => needsPipeline(opts)),
    );

  program
    .command("ask <question>")
    .description("answer a question from memory: evidence with sources, citations, confidence, a critic verdict (abstains when weak)")
    .option("--scope <prefix>", "scope prefix, e.g. acme:eng")
    .option("-k, --k <n>", "records of evidence", "5")
    .addOption(new Option("--mode <mode>", "how evidence is retrieved (default: graph when the pipeline has an entity graph, else hybrid)").choices([...SEARCH_MODES]))
    .option("--model <provider/model>", "a configured model writes the answer (default: extractive, offline)")
    .action(
      action(async (conn, opts, question: string) => {
        const o = opts as GlobalOptions & { scope?: string; k: string; mode?: SearchMode; model?: string };
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const packet = await conn.api.search.ask.mutate({
          workspaceId: conn.workspaceId,
          pipelineId: pipeline.id,
          branch: branch.name,
          question,
          scope: o.scope,
          k: Number(o.k) || 5,
          mode: o.mode,
          model: o.model,
        });
        print(opts, packet, () => {
          const lines = [
            packet.abstained ? `Abstained: ${packet.uncertaintyReason}` : `Answer: ${packet.answer}`,
            `  ${packet.label}`,
            `Confidence: ${packet.confidence.level} (${packet.confidence.score}) · critic: ${packet.critic.verdict} (${packet.critic.model}) ${packet.critic.reason}`,
            "",
            "Evidence:",
          ];
          for (const e of packet.evidence) {
            lines.push(`[${e.ref}] ${e.step} · ${e.id}${e.scope ? ` · ${e.scope}` : ""} · relevance ${e.relevance}`);
            lines.push(`    ${e.snippet.replace(/\s+/g, " ").slice(0, 240)}`);
            if (e.sources.length) lines.push(`    sources: ${e.sources.map((src) => `${src.step} ${src.id}`).join(", ")}`);
            for (const p of e.paths ?? []) lines.push(`    via ${describePath(p)}`);
          }
          if (!packet.evidence.length) lines.push("  (none)");
          return lines.join("\n");
        });
      }, (_args, opts) => needsPipeline(opts)),
    );

  program
    .command("walk <query>")
    .description("walk the memory top-down (Pyramid): from a high step through each level to the closest records and their sources")
    .requiredOption("--from <step>", "the step to start from, e.g. synthesis (the top of the pyramid)")
    .option("--scope <prefix>", "scope prefix, e.g. acme:eng")
    .option("--beam <n>", "records kept per level on the way down", "3")
    .option("--limit <n>", "records returned from the lowest level", "10")
    .action(
      action(async (conn, opts, query: string) => {
        const o = opts as GlobalOptions & { from: string; scope?: string; beam: string; limit: string };
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const result = await conn.api.search.walk.query({
          workspaceId: conn.workspaceId,
          pipelineId: pipeline.id,
          branch: branch.name,
          query,
          from: o.from,
          scope: o.scope,
          beam: Number(o.beam) || 3,
          limit: Number(o.limit) || 10,
        });
        print(opts, result, () => {
          if (result.hits.length === 0) return `No records under "${o.from}" for "${query}".`;
          const lines = [`Walked ${result.path.join(" → ")} for "${query}":`, ""];
          for (const level of result.levels) lines.push(`${level.step}: ${level.nodes.map((n) => n.id).join(", ") || "(none)"}`);
          lines.push("");
          for (const hit of result.hits) {
            lines.push(`${hit.step} · ${hit.id}${hit.scope ? ` · ${hit.scope}` : ""}`);
            lines.push(`  ${hit.content.replace(/\s+/g, " ").slice(0, 300)}`);
            for (const src of hit.sources) lines.push(`  source ${src.step} ${src.id}: ${src.content.replace(/\s+/g, " ").slice(0, 160)}`);
            lines.push("");
          }
          lines.push("Drill down: synthex lineage <id>   ·   synthex get <id>");
          return lines.join("\n");
        });
      }, (_args, opts) => needsPipeline(opts)),
    );

  registerPurgeCommand(program, deps);

  program
    .command("get <id>")
    .description("one record with its metadata and audit")
    .action(
      action(async (conn, opts, id: string) => {
        // With a pipeline selected, the record must be one its branch shows.
        const pipeline = opts.pipeline ?? readConfig().pipeline;
        const record = await conn.api.record.get.query({ workspaceId: conn.workspaceId, id, ...(pipeline ? { pipelineId: pipeline, branch: opts.branch } : {}) });
        print(opts, record, () => {
          const r = record;
          return [
            `${r.step} · ${r.id}${r.scope ? ` · ${r.scope}` : ""} · ${new Date(r.createdAt).toISOString()}`,
            "",
            r.content,
            "",
            `metadata: ${JSON.stringify(r.metadata)}`,
            r.audit ? `audit: ${JSON.stringify(r.audit)}` : "",
          ]
            .filter((l) => l !== undefined)
            .join("\n");
        });
      }),
    );

  program
    .command("lineage <id>")
    .description("provenance tree of a record, down to its sources")
    .option("--depth <n>", "max depth", "10")
    .action(
      action(async (conn, opts, id: string) => {
        const o = opts as GlobalOptions & { depth: string };
        const tree = await conn.api.record.lineage.query({ workspaceId: conn.workspaceId, id, maxDepth: Number(o.depth) || 10 });
        print(opts, tree, () => renderTree(tree));
      }),
    );

  program
    .command("stats")
    .description("record counts by step")
    .action(
      action(async (conn, opts) => {
        const { pipeline, branch } = await resolvePipeline(conn, opts);
        const status = await conn.api.pipeline.status.query({ workspaceId: conn.workspaceId, pipelineId: pipeline.id, branch: branch.name });
        print(opts, status, () => table(status.map((s) => ({ step: s.name, records: num(s.records) }))));
      }, (_args, opts) => needsPipeline(opts)),
    );

  program
    .command("export")
    .description("export the pipeline spec")
    .option("--toml", "as TOML (default)")
    .option("--spec-json", "as spec JSON")
    .action(
      action(async (conn, opts) => {
        const o = opts as GlobalOptions & { specJson?: boolean };
        const { pipeline, version } = await resolvePipeline(conn, opts);
        if (o.specJson || opts.json) console.log(JSON.stringify(version.spec, null, 2));
        else console.log((await import("../pipeline/toml")).specToToml(version.spec, { name: pipeline.name, agent: pipeline.agent, description: pipeline.description }));
      }, (_args, opts) => needsPipeline(opts)),
    );

  registerKeyCommands(program, deps);
  registerBranchCommands(program, { ...deps, selectBranch: (branch) => writeConfig({ ...readConfig(), branch }) });
  registerMemoryCommands(program, deps);
  registerEvalCommands(program, { ...deps, pipelineName: (opts) => opts.pipeline ?? readConfig().pipeline });
  registerLogCommands(program, deps);

  return program;
}

/** A key's restrictions as ", read-only, scope acme:eng, pipelines a, b" (empty when none). */
/** Graph mode: which of the question's entities the graph knows, and the names it does not. */
function graphLine(graph: { entities: Array<{ name: string; scope: string }>; unknownNames: string[]; beliefsRead: number }): string {
  const known = [...new Set(graph.entities.map((e) => e.name))];
  const parts = [known.length ? `entities ${known.join(", ")} (${graph.beliefsRead} beliefs read)` : "no entity of the graph named"];
  if (graph.unknownNames.length) parts.push(`not in the graph: ${graph.unknownNames.join(", ")}`);
  return `Graph: ${parts.join(" · ")}`;
}


/** The lineage tree, indented, one record per line. */
function renderTree(result: LineageResult): string {
  const lines: string[] = [];
  const walk = (node: LineageResult["tree"], depth: number) => {
    const text = node.preview.replace(/\s+/g, " ").slice(0, 80);
    lines.push(`${"  ".repeat(depth)}${depth ? "└ " : ""}${node.step} ${node.id}${node.repeated ? " (shown above)" : ""}  ${text}`);
    for (const child of node.children) walk(child, depth + 1);
  };
  walk(result.tree, 0);
  if (result.truncated) lines.push("… (truncated: raise --depth or use the web explorer)");
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("server/cli/main.ts")) {
  await buildCli().parseAsync(process.argv);
}
