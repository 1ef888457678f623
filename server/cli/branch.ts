/**
 * `synthex branch list|create|report|restore|switch|diff|promote|delete|protect`, `synthex gc` and
 * `synthex apply <spec.toml|pipeline.ts>`: the seed's §5.2 branching commands, through the same
 * tRPC procedures (and permission checks) as the web app.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { formatDiff, formatReason } from "../pipeline/diff";
import { pipelineFromToml } from "../pipeline/toml";
import type { Connection, RouterOutputs } from "./api";
import { candidateText, parseBindings, reportText } from "./migration";
import { num, table } from "./output";

export interface BranchGlobalOptions {
  pipeline?: string;
  branch: string;
  json?: boolean;
}

export interface BranchCliDeps {
  action: <A extends unknown[]>(
    fn: (conn: Connection, opts: BranchGlobalOptions, ...args: A) => Promise<void>,
    check?: (args: A, opts: BranchGlobalOptions & Record<string, unknown>) => void,
  ) => (...args: unknown[]) => Promise<void>;
  fail: (message: string, exitCode?: number) => never;
  /** The selected pipeline's name; fails when none is selected. */
  pipelineName: (opts: BranchGlobalOptions) => string;
  /** Remembers the branch later commands use (`branch switch`). */
  selectBranch: (name: string) => void;
}

const print = (opts: BranchGlobalOptions, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());

type BranchDiff = RouterOutputs["branch"]["diff"];

/** Per step: why it differs and how the records overlap. */
export function diffTable(diff: BranchDiff): string {
  const rows = diff.steps.map((s) => ({
    step: s.name,
    status: s.status,
    why: s.reasons.map(formatReason).join("; ") || (s.status === "unchanged" ? "" : s.status),
    [`only ${diff.a.name}`]: num(s.onlyA),
    [`only ${diff.b.name}`]: num(s.onlyB),
    shared: num(s.shared),
  }));
  return table(rows);
}

/** A record pair as text: the diff's removed parts as [-…-] and added ones as {+…+}. */
function pairText(pair: RouterOutputs["branch"]["pairs"]["pairs"][number], a: string, b: string): string {
  const mark = (side: typeof pair.diff.left, open: string, close: string) => side.map((s) => (s.changed ? `${open}${s.text}${close}` : s.text)).join("");
  return [`group ${pair.groupKey}`, `--- ${a} (${pair.a.id})`, mark(pair.diff.left, "[-", "-]"), `+++ ${b} (${pair.b.id})`, mark(pair.diff.right, "{+", "+}")].join("\n");
}

/** A spec from TOML or from a TypeScript/JavaScript module exporting a Pipeline (SDK) or a spec. */
async function loadSpecFile(file: string, fail: BranchCliDeps["fail"]): Promise<unknown> {
  if (!existsSync(file)) fail(`File not found: ${file}`, 2);
  if (file.endsWith(".toml")) return pipelineFromToml(readFileSync(file, "utf8")).spec;
  if (!/\.(ts|mts|js|mjs)$/.test(file)) fail(`Cannot apply ${file}: use a .toml spec or a .ts/.js module that exports a Pipeline or a spec.`, 2);
  const mod = (await import(pathToFileURL(path.resolve(file)).href)) as Record<string, unknown>;
  const value = mod.default ?? mod.pipeline ?? mod.spec;
  if (!value) fail(`${file} exports nothing to apply: export default a Pipeline (server/pipeline/sdk) or a spec object.`, 2);
  const withSpec = value as { toSpec?: () => unknown };
  return typeof withSpec.toSpec === "function" ? withSpec.toSpec() : value;
}

export function registerBranchCommands(program: Command, deps: BranchCliDeps) {
  const { action, fail, pipelineName } = deps;
  const ref = (conn: Connection, opts: BranchGlobalOptions, branch?: string) => ({
    workspaceId: conn.workspaceId,
    pipelineId: pipelineName(opts),
    branch: branch ?? opts.branch,
  });
  const needsPipeline = (_args: unknown, opts: BranchGlobalOptions) => void pipelineName(opts);

  const branch = program.command("branch").description("branches: try a prompt, model or architecture without touching main, then promote it");

  branch
    .command("list")
    .description("branches of the pipeline (* the selected one)")
    .action(
      action(async (conn, opts) => {
        const list = await conn.api.branch.list.query(ref(conn, opts, "main"));
        print(opts, list, () =>
          [
            table(
              list.branches.map((b) => ({
                "": b.name === opts.branch ? "*" : "",
                name: b.name,
                version: b.version ? `${b.version.hash.slice(0, 8)} ${b.version.message}`.slice(0, 48) : "",
                records: num(b.pointers),
                "last run": b.lastRun?.status ?? "-",
                created: b.createdAt.toISOString().slice(0, 16).replace("T", " "),
              })),
            ),
            `main is ${list.protectedMain ? "protected (editors save on branches; admins and owners promote)" : "not protected"}.`,
          ].join("\n"),
        );
      }, needsPipeline),
    );

  branch
    .command("create <name>")
    .description("a new branch: copies pointers (0 records computed); with --template, try another architecture on the same raw records")
    .option("--from <branch|version>", "start from this branch or saved version (default: the selected branch)")
    .option("-d, --description <text>", "what the branch tries")
    .option("--template <id>", "try this template's architecture: its sources bound to the pipeline's (by format), printing the binding and the plan")
    .option("--bind <templateSource=pipelineSource>", "with --template: bind a template source to a pipeline source (repeatable)", (v: string, all: string[]) => [...all, v], [] as string[])
    .option("--model <provider/model>", "with --template: the model of its prompt steps (default: main's)")
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as BranchGlobalOptions & { from?: string; description?: string; template?: string; bind: string[]; model?: string };
        if (o.template) {
          const parsed = parseBindings(o.bind);
          const bind = "bad" in parsed ? fail(`--bind "${parsed.bad}": use templateSource=pipelineSource, e.g. --bind sessions=chats.`, 2) : parsed.bind;
          const created = await conn.api.migration.create.mutate({ ...ref(conn, opts, "main"), name, template: o.template, bind, model: o.model });
          print(opts, created, () => candidateText(created));
          return;
        }
        if (o.bind.length || o.model) fail("--bind and --model go with --template.", 2);
        const created = await conn.api.branch.create.mutate({ ...ref(conn, opts), name, from: o.from ?? opts.branch, description: o.description ?? "" });
        print(opts, created, () => `${created.message}\nNext: synthex branch switch ${name}   ·   synthex apply <spec.toml> --branch ${name}`);
      }, needsPipeline),
    );

  branch
    .command("report <name>")
    .description("the migration report: the branch against main on your question sets, replayed and shadow traffic, cost, and what got worse")
    .option("--against <branch>", "the baseline", "main")
    .option("--question-set <set>", "the question set (default: the newest scored on both branches)")
    .option("--no-replay", "leave the replay of logged queries out")
    .option("--sample <n>", "replay a seeded sample of this many logged queries")
    .option("--judge-model <provider/model>", "ask this model which side's context answers better")
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as BranchGlobalOptions & { against: string; questionSet?: string; replay: boolean; sample?: string; judgeModel?: string };
        const sample = o.sample === undefined ? undefined : Number(o.sample);
        if (sample !== undefined && !(Number.isInteger(sample) && sample >= 1)) fail(`--sample "${o.sample}": a whole number of queries, 1 or more.`, 2);
        const report = await conn.api.migration.report.mutate({ ...ref(conn, opts, name), baseline: o.against, questionSet: o.questionSet, replay: o.replay, sample, judgeModel: o.judgeModel });
        print(opts, report, () => reportText(report));
      }, needsPipeline),
    );

  branch
    .command("restore <kept>")
    .description("put back the main a promotion kept (previous/<branch>): its spec and records, nothing recomputed")
    .action(
      action(async (conn, opts, kept: string) => {
        const result = await conn.api.migration.restore.mutate({ ...ref(conn, opts, "main"), kept });
        print(opts, result, () => result.message);
      }, needsPipeline),
    );

  branch
    .command("switch <name>")
    .description("select the branch later commands use (run, plan, search, get, stats, export)")
    .action(
      action(async (conn, opts, name: string) => {
        const got = await conn.api.pipeline.get.query(ref(conn, opts, name));
        deps.selectBranch(got.branch.name);
        print(opts, { branch: got.branch.name, version: got.version.hash }, () => `Switched to branch ${got.branch.name} (version ${got.version.hash.slice(0, 8)}).`);
      }, needsPipeline),
    );

  branch
    .command("diff <name>")
    .description("how a branch differs from main (or --against): per step why, and records only on each side or shared")
    .option("--against <branch>", "the baseline", "main")
    .option("--step <step>", "also show the records of this step that differ, side by side")
    .option("--limit <n>", "record pairs to show with --step", "3")
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as BranchGlobalOptions & { against: string; step?: string; limit: string };
        const diff = await conn.api.branch.diff.query({ ...ref(conn, opts, name), against: o.against });
        const pairs = o.step ? await conn.api.branch.pairs.query({ ...ref(conn, opts, name), against: o.against, step: o.step, limit: Number(o.limit) || 3 }) : null;
        print(opts, pairs ? { ...diff, pairs: pairs.pairs } : diff, () =>
          [
            `${diff.b.name} (${diff.b.hash.slice(0, 8)}) against ${diff.a.name} (${diff.a.hash.slice(0, 8)}):`,
            formatDiff(diff.spec),
            "",
            diffTable(diff),
            ...(pairs ? ["", ...(pairs.pairs.length ? pairs.pairs.map((p) => pairText(p, diff.a.name, diff.b.name)) : [`No record of ${o.step} differs.`])] : []),
          ].join("\n"),
        );
      }, needsPipeline),
    );

  branch
    .command("promote <name>")
    .description("promote a branch into main: main takes its changes and records (refused while it is stale or running)")
    .option("-m, --message <text>", "message of main's new version")
    .option("--keep-main", "keep the current main as a branch (previous/<name>) first, restorable with `synthex branch restore`")
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as BranchGlobalOptions & { message?: string; keepMain?: boolean };
        const input = { ...ref(conn, opts, name), message: o.message ?? "" };
        const result = o.keepMain ? await conn.api.migration.promote.mutate(input) : await conn.api.branch.promote.mutate(input);
        print(opts, result, () => [formatDiff(result.diff), "", result.message].join("\n"));
      }, needsPipeline),
    );

  branch
    .command("delete <name>")
    .description("delete a branch (not main): its pointers go, records stay until `synthex gc`")
    .action(
      action(async (conn, opts, name: string) => {
        const result = await conn.api.branch.delete.mutate(ref(conn, opts, name));
        if (opts.branch === name) deps.selectBranch("main");
        print(opts, result, () => result.message);
      }, needsPipeline),
    );

  branch
    .command("protect <on|off>")
    .description("protect main (editors save on branches; admins and owners promote) or not")
    .action(
      action(async (conn, opts, state: string) => {
        if (state !== "on" && state !== "off") fail(`Use "on" or "off", not "${state}".`, 2);
        const result = await conn.api.branch.setProtection.mutate({ ...ref(conn, opts, "main"), protectedMain: state === "on" });
        print(opts, result, () => `main is ${result.protectedMain ? "protected" : "not protected"}.`);
      }, needsPipeline),
    );

  program
    .command("gc")
    .description("delete records no branch uses (never implicit); --dry-run first to see what would go")
    .option("--dry-run", "report only")
    .action(
      action(async (conn, opts) => {
        const o = opts as BranchGlobalOptions & { dryRun?: boolean };
        const result = await conn.api.branch.gc.mutate({ ...ref(conn, opts, "main"), dryRun: Boolean(o.dryRun) });
        const steps = Object.entries(result.byStep).map(([s, c]) => `${s} ${num(c)}`).join(", ");
        print(opts, result, () =>
          result.dryRun
            ? `Dry run: ${num(result.records)} record(s) no branch uses (${num(result.bytes)} characters)${steps ? `: ${steps}` : ""}. Run \`synthex gc\` to delete them.`
            : `Deleted ${num(result.deleted)} record(s) no branch used${steps ? `: ${steps}` : ""}.`,
        );
      }, needsPipeline),
    );

  program
    .command("apply <file>")
    .description("save a new version from a TOML spec or a TypeScript SDK module, printing the diff with reasons first")
    .option("-m, --message <text>", "version message")
    .action(
      action(async (conn, opts, file: string) => {
        const o = opts as BranchGlobalOptions & { message?: string };
        const spec = await loadSpecFile(file, fail);
        const preview = await conn.api.pipeline.previewVersion.query({ ...ref(conn, opts), spec });
        if (preview.unchanged) {
          print(opts, { ...preview, saved: null }, () => `No changes: branch ${opts.branch} already has this spec.`);
          return;
        }
        if (!opts.json) console.log(`${formatDiff(preview.diff)}\n`);
        const saved = await conn.api.pipeline.saveVersion.mutate({ ...ref(conn, opts), spec, message: o.message ?? `apply ${path.basename(file)}` });
        if (opts.json) console.log(JSON.stringify({ ...preview, saved: { id: saved.version.id, hash: saved.version.hash } }, null, 2));
        else console.log(`Saved version ${saved.version.hash.slice(0, 8)} on branch ${opts.branch}. Next: synthex plan --branch ${opts.branch}`);
      }, (_args, opts) => void pipelineName(opts)),
    );
}
