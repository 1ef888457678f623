#!/usr/bin/env node
// The `synthex` command. Runs the CLI (server/cli/main.ts) as JavaScript that esbuild bundled from
// the sources, kept in node_modules/.cache/synthex-cli and rebuilt when a source it was built from
// changed (one stat per input file, ~1 ms); packages stay in node_modules. Built by postinstall
// (`--prebuild`) or on first use (~1 s). Without esbuild it falls back to tsx (compiles per call).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cacheDir = path.join(root, "node_modules", ".cache", "synthex-cli");
const stampFile = path.join(cacheDir, "build.json");
const entry = path.join(root, "server", "cli", "main.ts");

/** The current build's directory when every input still has the mtime it was built from. */
function freshBuild() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, "utf8"));
  } catch {
    return null;
  }
  for (const [file, mtimeMs] of Object.entries(stamp.inputs)) {
    try {
      if (statSync(path.join(root, file)).mtimeMs !== mtimeMs) return null;
    } catch {
      return null;
    }
  }
  const dir = path.join(cacheDir, stamp.dir);
  return existsSync(path.join(dir, "main.js")) ? dir : null;
}

/** Bundles into a new directory, then points the stamp at it (concurrent builds each finish whole). */
async function build() {
  const require = createRequire(import.meta.url);
  const esbuild = await import(pathToFileURL(require.resolve("esbuild", { paths: [root] })).href);
  const name = `build-${Date.now()}-${process.pid}`;
  const outdir = path.join(cacheDir, name);
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    splitting: true, // the router, the database and the services load only in commands that use them
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outdir,
    metafile: true,
    logLevel: "error",
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) inputs[file] = statSync(path.join(root, file)).mtimeMs;
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${stampFile}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ dir: name, inputs }));
  renameSync(tmp, stampFile);
  // Older builds: removed once they are an hour old (a command still running may be loading one).
  for (const old of readdirSync(cacheDir)) {
    const full = path.join(cacheDir, old);
    if (old.startsWith("build-") && old !== name && Date.now() - statSync(full).mtimeMs > 3_600_000) rmSync(full, { recursive: true, force: true });
  }
  return outdir;
}

/** The command's name: the first argument that is neither an option nor a global option's value. */
function commandName(args) {
  for (let i = 0; i < args.length; i++) {
    if (["-p", "--pipeline", "-b", "--branch", "--url", "--api-key"].includes(args[i])) i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return undefined;
}

/**
 * V8 flags for this command (SYNTHEX_V8_FLAGS replaces them). WebAssembly (PGlite's Postgres,
 * Prisma's query compiler) and JavaScript run first as baseline code, and V8 recompiles what runs
 * often with its optimizing compilers on other threads. A command that answers and exits pays for
 * that and is gone before it pays back: with `--liftoff-only --no-opt`, `status` used ~1.5 s of
 * CPU instead of ~3.0 s (`search` ~1.7 instead of ~3.2). Commands that may work for minutes keep
 * optimizing, only what runs 100× V8's default budget (`run` on the hello world: 4.8 → 2.8 s CPU).
 */
function v8Flags(args) {
  if (process.env.SYNTHEX_V8_FLAGS !== undefined) return process.env.SYNTHEX_V8_FLAGS;
  const working = ["run", "eval", "import", "init", "watch", "replay", "apply", "gc", "purge"];
  return working.includes(commandName(args)) ? "--wasm-tiering-budget=180000000" : "--liftoff-only --no-opt";
}

async function compiled() {
  try {
    return freshBuild() ?? (await build());
  } catch (err) {
    if (process.env.SYNTHEX_CLI_DEBUG) console.error("synthex: no compiled CLI, using tsx:", err);
    return null;
  }
}

if (process.argv[2] === "--prebuild") {
  // postinstall: build now so the first command is fast; never fail the install over it.
  await compiled();
  process.exit(0);
}

const dir = await compiled();
const v8 = v8Flags(process.argv.slice(2));
setFlagsFromString(v8);
if (!dir) {
  const require = createRequire(import.meta.url);
  const tsx = require.resolve("tsx/cli", { paths: [root] });
  const result = spawnSync(process.execPath, [tsx, entry, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(result.status ?? 1);
}
// The bundle's own location is not the repository's: the migrations are found from here instead.
if (!process.env.SYNTHEX_MIGRATIONS_DIR && !existsSync(path.resolve("prisma/migrations"))) {
  process.env.SYNTHEX_MIGRATIONS_DIR = path.join(root, "prisma", "migrations");
}
const mark = (label) => {
  const cpu = process.cpuUsage();
  if (process.env.SYNTHEX_TIMING) process.stderr.write(`[timing] ${performance.now().toFixed(0).padStart(6)} ms  cpu ${((cpu.user + cpu.system) / 1000).toFixed(0).padStart(5)} ms  ${label}\n`);
};
mark(`compiled CLI found (V8 flags: ${v8 || "none"})`);
const { buildCli } = await import(pathToFileURL(path.join(dir, "main.js")).href);
mark("CLI entry loaded");
await buildCli().parseAsync(process.argv);
