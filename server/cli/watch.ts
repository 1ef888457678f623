/**
 * `synthex watch <dir>`: imports every note, document, image or audio file that appears or changes
 * in a folder (once per content) until Ctrl-C; on this machine's database each import that added
 * something requests an incremental run, which runs in this process while it watches.
 */
import path from "node:path";
import type { Command } from "commander";
import type { BranchGlobalOptions } from "./branch";
import { fileImports, resolvePipeline, type CommandDeps } from "./import";
import { num } from "./output";

export function registerWatchCommand(program: Command, deps: CommandDeps) {
  const { action, fail, pipelineName } = deps;
  const { requireFile, importInto } = fileImports(fail);
  program
    .command("watch <dir>")
    .description("import every note, document, image or audio file that appears or changes in a folder (once per content); Ctrl-C stops")
    .option("--source <name>", "source name (default: the first source)")
    .option("--stable-ms <ms>", "wait until a file's size is still this long before reading it", "2000")
    .option("--poll", "poll the folder (network drives)")
    .action(
      action(async (conn, opts, dir: string) => {
        const o = opts as BranchGlobalOptions & { source?: string; stableMs: string; poll?: boolean };
        const { pipeline, version } = await resolvePipeline(conn, opts, deps);
        const into = o.source ?? version.spec.sources[0]?.name ?? fail("This pipeline has no source.");
        const { watchFolder } = await import("../services/watch-folder");
        const say = (line: string) => (opts.json ? undefined : console.log(line));
        const watcher = watchFolder(dir, {
          stableMs: Number(o.stableMs) || 2000,
          usePolling: o.poll,
          importOne: async (file) => {
            const res = await importInto(conn, pipeline.id, into, file);
            // On this machine's database (local executor) the import only announces itself to Inngest:
            // the incremental run is requested here, and runs in this process while it watches.
            if (conn.mode !== "remote" && res.added > 0) {
              const { requestIncrementalRun } = await import("../services/ingest");
              await requestIncrementalRun(conn.db!, { workspaceId: conn.workspaceId, pipelineId: pipeline.id }, "watch: a file was imported", `${path.basename(file)} was imported into ${into}`);
            }
            return res;
          },
          onEvent: (e) => {
            if (opts.json) return console.log(JSON.stringify(e));
            if (e.kind === "imported") say(`imported ${e.file}: ${num(e.received)} read, ${num(e.added)} new${e.added ? " (incremental run requested)" : ""}`);
            else if (e.kind === "unchanged") say(`${e.file}: same content as ${e.sameAs}, already imported`);
            else if (e.kind === "failed") console.error(`synthex: ${e.file}: ${e.message}`);
            else if (e.kind === "deleted") say(`${e.file} was deleted from the folder; its records stay in memory (forget them in the explorer)`);
          },
        });
        await watcher.ready;
        say(`Watching ${dir} → ${pipeline.name}/${into}. Ctrl-C to stop.`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await watcher.close();
      }, ([dir], opts) => { pipelineName(opts); requireFile(dir); }),
    );
}
