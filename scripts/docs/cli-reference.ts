/** docs/cli.md: the `synthex` command reference, rendered from the CLI's own commander definitions (server/cli/main.ts). */
import type { Command } from "commander";
import { buildCli } from "../../server/cli/main";
import { anchor } from "../../components/docs/links";
import { GENERATED_NOTE } from "./configuration";

/** Usage text is wrapped at this width whatever the terminal that generates the page (fits the docs page at 1024 px). */
const HELP_WIDTH = 84;

interface Entry {
  path: string;
  command: Command;
  depth: number;
}

function entries(command: Command, parents: string[] = [], out: Entry[] = []): Entry[] {
  for (const sub of command.commands) {
    const path = [...parents, sub.name()];
    out.push({ path: `synthex ${path.join(" ")}`, command: sub, depth: path.length });
    entries(sub, path, out);
  }
  return out;
}

function usage(command: Command): string {
  command.configureHelp({ helpWidth: HELP_WIDTH });
  return command.helpInformation().trimEnd();
}

export function cliReferencePage(): string {
  const program = buildCli();
  const all = entries(program);
  const out = [
    GENERATED_NOTE("the CLI's definitions (server/cli)"),
    "",
    "# CLI reference",
    "",
    "At the end of this page you will know every `synthex` command, its arguments and its options, and the fastest way to call it.",
    "",
    "## Calling the CLI",
    "",
    "From the repository's root, `./synthex` runs the CLI straight away (it calls `bin/synthex.mjs` with Node). " +
      "`npx synthex …` and `npm run synthex -- …` work too, but each call first starts npm, which costs several times the CPU of a quick command itself. " +
      "The examples below write `synthex`: use whichever you like.",
    "",
    "```text",
    "./synthex --help",
    "./synthex init notes --template chat-memory",
    "npx synthex status",
    "```",
    "",
    "Without `--url` the CLI works on the embedded database in `.synthex` (the workspace the web app shows on this machine); " +
      "with `--url` and an API key it talks to a running server. The environment variables it reads (`SYNTHEX_DATA_DIR`, `SYNTHEX_URL`, `SYNTHEX_API_KEY`, …) are in [Configuration](configuration.md).",
    "",
    "The global options (`--pipeline`, `--branch`, `--json`, `--url`, `--api-key`) go before or after the command and apply to every command.",
    "",
    "## Commands",
    "",
    ...all.map((e) => `${"  ".repeat(e.depth - 1)}- [\`${e.path}\`](#${anchor(e.path)}): ${e.command.description().split("\n")[0]}`),
    "",
    "## synthex",
    "",
    "```text",
    usage(program),
    "```",
  ];
  for (const e of all) {
    out.push("", `${e.depth === 1 ? "##" : "###"} ${e.path}`, "", e.command.description(), "", "```text", usage(e.command), "```");
  }
  return `${out.join("\n")}\n`;
}
