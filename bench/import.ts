/**
 * npm run bench:import — generates a ChatGPT export (~2,000 conversations, ~200 MB, with regenerations,
 * tool calls and hidden messages), imports it into a fresh embedded database, prints time and peak RSS.
 * Usage: npm run bench:import -- [conversations] [--zip] [--keep] [--in-process]   (default 2000; goal: peak RSS < 400 MB)
 *        npm run bench:import -- --media [pages] [images]   PDF pages/s, OCR images/s, RSS for a 500-page PDF
 *
 * The import runs with a 256 MB V8 heap limit (`--no-heap-cap` for Node's default, where RSS mostly
 * shows lazy garbage collection).
 * By default the embedded database runs in a child process (as when `npm start` owns it and the CLI
 * connects), so the importer's RSS is measured on its own; the owner's peak RSS is printed beside it.
 * `--in-process` opens PGlite in this process instead (its WASM heap, ~500 MB, then counts here).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline as pump } from "node:stream/promises";
import { createReadStream } from "node:fs";
import { ZipFile } from "yazl";

const args = process.argv.slice(2);
const conversations = Number(args.find((a) => /^\d+$/.test(a)) ?? 2000);
const asZip = args.includes("--zip");
const keep = args.includes("--keep");
const dir = process.env.SYNTHEX_BENCH_IMPORT_DIR ?? mkdtempSync(path.join(tmpdir(), "synthex-bench-import-"));
process.env.SYNTHEX_BENCH_IMPORT_DIR = dir; // the database-owner child uses the same data directory
process.env.SYNTHEX_DATA_DIR = path.join(dir, "data");
delete process.env.DATABASE_URL;

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
const sampler = setInterval(sample, 50);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

const WORDS = "the a garden rust tokio borrow sourdough starter lyon train basil mint fern memory pipeline branch record query index vector summary month world model agent tool python export import stream batch".split(" ");
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" ");

function message(id: string, role: string, parts: unknown[], extra: Record<string, unknown> = {}, contentType = "text") {
  return { id, author: { role, name: extra.name ?? null, metadata: {} }, create_time: 1700000000 + rand() * 1e7, update_time: null, content: { content_type: contentType, parts }, status: "finished_successfully", end_turn: true, weight: 1, metadata: extra.metadata ?? {}, recipient: extra.recipient ?? "all" };
}

/** One conversation of ~100 KB: hidden system node, ~20 exchanges, a regeneration, a python call and its output. */
function conversation(i: number) {
  const id = `bench-${String(i).padStart(6, "0")}-0000-4000-8000-000000000000`;
  const mapping: Record<string, unknown> = {};
  const add = (nid: string, parent: string | null, msg: unknown) => {
    mapping[nid] = { id: nid, message: msg, parent, children: [] };
    if (parent) (mapping[parent] as { children: string[] }).children.push(nid);
  };
  add("client-created-root", null, null);
  add("sys", "client-created-root", { ...message("sys", "system", [""]), metadata: { is_visually_hidden_from_conversation: true }, weight: 0 });
  let parent = "sys";
  const turns = 20;
  for (let t = 0; t < turns; t++) {
    const u = `u${t}`;
    add(u, parent, message(u, "user", [`Question ${t} of conversation ${i}: ${words(60)}`]));
    if (t === 3) add(`a${t}-old`, u, message(`a${t}-old`, "assistant", [`Abandoned draft ${words(300)}`]));
    if (t === 5) {
      add(`c${t}`, u, message(`c${t}`, "assistant", [], { recipient: "python" }, "code"));
      (mapping[`c${t}`] as { message: { content: unknown } }).message.content = { content_type: "code", language: "python", text: `print(sum(range(${t})))` };
      add(`o${t}`, `c${t}`, message(`o${t}`, "tool", [], { name: "python" }, "execution_output"));
      (mapping[`o${t}`] as { message: { content: unknown } }).message.content = { content_type: "execution_output", text: String((t * (t - 1)) / 2) };
      add(`a${t}`, `o${t}`, message(`a${t}`, "assistant", [`Answer ${t}: ${words(650)}`], { metadata: { model_slug: "gpt-4o" } }));
    } else {
      add(`a${t}`, u, message(`a${t}`, "assistant", [`Answer ${t}: ${words(650)}`], { metadata: { model_slug: "gpt-4o" } }));
    }
    parent = `a${t}`;
  }
  return { id, conversation_id: id, title: i % 10 === 0 ? null : `Bench conversation ${i} about ${words(3)}`, create_time: 1700000000 + i * 3600, update_time: 1700000000 + i * 3600 + 600, current_node: parent, default_model_slug: "gpt-4o", is_archived: false, mapping };
}

async function generate(file: string) {
  const out = createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, "drain");
  };
  await write("[");
  for (let i = 0; i < conversations; i++) await write((i ? "," : "") + JSON.stringify(conversation(i)));
  await write("]");
  out.end();
  await once(out, "finish");
}

/** A zip with conversations.json, deflated by streaming (yazl switches to zip64 when it must). */
async function zipIt(json: string, zip: string) {
  const archive = new ZipFile();
  archive.addReadStream(createReadStream(json), "conversations.json");
  archive.end();
  await pump(archive.outputStream, createWriteStream(zip));
}

/** Child mode: own the embedded database until told to stop, then print this process's peak RSS. */
async function dbOwner() {
  const { ensureEmbeddedServer } = await import("../server/store/embedded-server");
  const server = await ensureEmbeddedServer();
  console.log(`ready ${server.url.replace(/:[^:@/]+@/, ":***@")}`); // never print the database password
  const stop = async () => {
    await server.close().catch(() => {});
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  setInterval(() => {}, 60_000);
}

function startOwner(): Promise<{ child: ChildProcess; stop: () => Promise<number> }> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--db-owner"], { stdio: ["ignore", "pipe", "inherit"], env: process.env });
  let out = "";
  let stopping = false;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      if (!out.includes("ready ")) reject(new Error(`database owner exited early (${code})`));
      else if (!stopping) console.error(`database owner exited unexpectedly (code ${code})`);
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready ")) {
        resolve({
          child,
          /** Reads the owner's peak RSS (VmHWM) from /proc, then stops it. */
          stop: async () => {
            stopping = true;
            let hwm = 0;
            try {
              const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
              hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
            } catch {
              /* not Linux */
            }
            if (child.exitCode === null && child.signalCode === null) {
              const keepAlive = setInterval(() => {}, 1000);
              const exited = new Promise<void>((res) => child.once("exit", () => res()));
              child.kill("SIGTERM");
              await Promise.race([exited, new Promise((res) => setTimeout(res, 15_000))]);
              if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
              clearInterval(keepAlive);
            }
            return hwm;
          },
        });
      }
    });
  });
}

async function main() {
  const inProcess = args.includes("--in-process");
  const json = path.join(dir, "conversations.json");
  let t = Date.now();
  await generate(json);
  let file = json;
  if (asZip) {
    file = path.join(dir, "chatgpt-export.zip");
    await zipIt(json, file);
  }
  console.log(`generated ${conversations} conversations: ${mb(statSync(json).size)} JSON${asZip ? `, ${mb(statSync(file).size)} zip` : ""} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  if (global.gc) global.gc();
  peakRss = 0;
  peakHeap = 0;
  sample();
  const baseRss = process.memoryUsage().rss;

  const owner = inProcess ? null : await startOwner();
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb: getDb } = await import("../server/store/runtime-env");
  const { Pipeline } = await import("../server/pipeline/sdk");
  const { createPipeline } = await import("../server/services/pipelines");
  const { signUp } = await import("../server/services/users");
  const { importFile } = await import("../server/services/imports");
  const db = await getDb();
  const { workspace } = await signUp(db, { email: "bench@example.com", password: "bench-password" });
  const spec = new Pipeline("bench-import", {}).source("chats", { format: "chatgpt-export" }).toSpec();
  const { pipeline } = await createPipeline(db, workspace.id, { name: "bench-import", spec });
  const openedRss = process.memoryUsage().rss;

  t = Date.now();
  let lastLog = 0;
  const res = await importFile(db, {
    workspaceId: workspace.id,
    pipelineId: pipeline.id,
    source: "chats",
    path: file,
    onProgress: (p) => {
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        console.log(`  … ${p.received} conversations, rss ${mb(process.memoryUsage().rss)}`);
      }
    },
  });
  const secs = (Date.now() - t) / 1000;
  sample();
  console.log(
    `import: ${res.received} conversations, ${res.added} added, ${res.skipped} skipped, ${res.warningCount} warnings in ${secs.toFixed(1)} s ` +
      `(${(statSync(json).size / 1024 / 1024 / secs).toFixed(1)} MB/s, ${(res.received / secs).toFixed(0)} conv/s)`,
  );

  const importPeak = peakRss;
  console.log(`  peak RSS during the first import: ${mb(importPeak)}`);
  t = Date.now();
  const again = await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: file });
  console.log(`re-import: ${again.received} received, ${again.added} added in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  sample();
  clearInterval(sampler);
  await closeDb();
  const ownerPeak = owner ? await owner.stop() : 0;
  console.log(
    `importer peak RSS ${mb(peakRss)}${heapCapped ? " (heap limit 256 MB)" : " (no heap limit)"} (before db ${mb(baseRss)}, db connected ${mb(openedRss)}${inProcess ? "; includes in-process PGlite" : ""}), peak JS heap ${mb(peakHeap)}; ` +
      `goal < 400 MB: ${peakRss < 400 * 1024 * 1024 ? "OK" : "OVER"}` +
      (owner ? `\ndatabase owner process (PGlite) peak RSS ${mb(ownerPeak)}` : ""),
  );
  if (!keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

const heapCapped = /--max-old-space-size/.test(`${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`);
if (args.includes("--media")) {
  // Documents and OCR (see bench/import-media.ts).
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
  await import("./import-media");
} else if (!args.includes("--db-owner") && !heapCapped && !args.includes("--no-heap-cap")) {
  // V8 grows the old generation lazily (default limit ~2 GB), so RSS measures GC slack, not what the
  // importer holds. Re-run with a 256 MB heap limit (a CLI can do the same): if the import fits,
  // memory is flat. `--no-heap-cap` measures the default instead.
  clearInterval(sampler);
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    stdio: "inherit",
    env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --max-old-space-size=256`.trim() },
  });
  child.on("exit", (code) => {
    if (!keep) rmSync(dir, { recursive: true, force: true });
    process.exit(code ?? 1);
  });
} else if (args.includes("--db-owner")) {
  clearInterval(sampler);
  void dbOwner();
} else main().catch((err) => {
  clearInterval(sampler);
  console.error(err);
  if (!keep) rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
