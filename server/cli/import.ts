/**
 * `synthex import <file>` and the file import that `init --from` and `watch` share: on this
 * machine's database through the import service, with `--url` as an upload to the server's REST
 * endpoint (the same one the web app posts to).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Option, type Command } from "commander";
import { IMPORT_FORMATS, type ImportFormat } from "../importers/types";
import type { Connection } from "./api";
import type { BranchCliDeps, BranchGlobalOptions } from "./branch";
import { num, print } from "./output";

export type CommandDeps = Omit<BranchCliDeps, "selectBranch">;

export interface ImportResult {
  received: number;
  added: number;
  skipped: number;
  warnings: unknown[];
  format: string;
}

/** The selected pipeline (by name) on the selected branch, as the router returns it. */
export function resolvePipeline(conn: Connection, opts: BranchGlobalOptions, deps: Pick<CommandDeps, "pipelineName">) {
  return conn.api.pipeline.get.query({ workspaceId: conn.workspaceId, pipelineId: deps.pipelineName(opts), branch: opts.branch });
}

/** File imports for the commands that take a file, failing through the CLI's `fail`. */
export function fileImports(fail: CommandDeps["fail"]) {
  const requireFile = (file: string) => void (existsSync(file) || fail(`File not found: ${file}`, 2));

  async function importInto(conn: Connection, pipelineId: string, source: string, file: string, format?: ImportFormat): Promise<ImportResult> {
    requireFile(file);
    if (conn.mode === "remote") {
      const body = new FormData();
      body.set("file", new Blob([readFileSync(file)]), path.basename(file));
      if (format) body.set("format", format);
      const res = await fetch(`${conn.url}/api/v1/pipelines/${pipelineId}/sources/${source}/upload`, {
        method: "POST",
        headers: { authorization: `Bearer ${conn.apiKey}` },
        body,
      });
      if (!res.ok) {
        const text = await res.text();
        let message = text;
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
        } catch {
          // not JSON: the text as it came
        }
        fail(`Upload failed (${res.status}): ${message}`);
      }
      return (await res.json()) as ImportResult;
    }
    const { importFile } = await import("../services/imports");
    return importFile(conn.db!, { workspaceId: conn.workspaceId, pipelineId, source, path: file, format, actor: conn.actor });
  }

  function reportImport(opts: BranchGlobalOptions, file: string, result: ImportResult) {
    print(opts, result, () => {
      const lines = [`Imported ${file} (${result.format}): ${num(result.received)} read, ${num(result.added)} new, ${num(result.skipped)} skipped.`];
      for (const w of (result.warnings as Array<{ conversation?: string; reason: string }>).slice(0, 10)) {
        lines.push(`  warning${w.conversation ? ` [${w.conversation}]` : ""}: ${w.reason}`);
      }
      if (result.warnings.length > 10) lines.push(`  … ${result.warnings.length - 10} more warnings`);
      return lines.join("\n");
    });
  }

  return { requireFile, importInto, reportImport };
}

export function registerImportCommand(program: Command, deps: CommandDeps) {
  const { action, fail, pipelineName } = deps;
  const { requireFile, importInto, reportImport } = fileImports(fail);
  program
    .command("import <file>")
    .description("import a file into a source of the pipeline")
    .option("--source <name>", "source name (default: the first source)")
    .addOption(new Option("--format <format>", "override format detection").choices(IMPORT_FORMATS))
    .action(
      action(async (conn, opts, file: string) => {
        const o = opts as BranchGlobalOptions & { source?: string; format?: ImportFormat };
        const { pipeline, version } = await resolvePipeline(conn, opts, deps);
        const source = o.source ?? version.spec.sources[0]?.name ?? fail("This pipeline has no source.");
        reportImport(opts, file, await importInto(conn, pipeline.id, source, file, o.format));
      }, ([file], opts) => { pipelineName(opts); requireFile(file); }),
    );
}
