/**
 * `npm run docs:generate`: writes the generated docs pages, docs/cli.md (from the CLI's commander
 * definitions) and docs/configuration.md (from .env.example). `--check`: writes nothing, exits 1 and
 * names the pages that differ from what would be generated (scripts/generate-docs.test.ts does the same).
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { cliReferencePage } from "./docs/cli-reference";
import { configurationPage } from "./docs/configuration";

const ROOT = path.resolve(import.meta.dirname, "..");

/** Each generated page (relative to the repository) and its content. */
export function generatedPages(root = ROOT): Record<string, string> {
  return {
    "docs/cli.md": cliReferencePage(),
    "docs/configuration.md": configurationPage(readFileSync(path.join(root, ".env.example"), "utf8")),
  };
}

function main() {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const [file, content] of Object.entries(generatedPages())) {
    const full = path.join(ROOT, file);
    let current: string | null = null;
    try {
      current = readFileSync(full, "utf8");
    } catch {
      current = null;
    }
    if (current === content) continue;
    if (check) stale.push(file);
    else {
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
      console.log(`wrote ${file}`);
    }
  }
  if (stale.length) {
    console.error(`Out of date (run npm run docs:generate): ${stale.join(", ")}`);
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
