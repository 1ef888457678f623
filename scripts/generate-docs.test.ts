/**
 * The generated docs pages cannot drift: docs/cli.md must be what the CLI's definitions generate and
 * docs/configuration.md what .env.example generates (`npm run docs:generate` rewrites both).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnvExample } from "./docs/env-example";
import { generatedPages } from "./generate-docs";

const ROOT = path.resolve(import.meta.dirname, "..");

describe("generated docs", () => {
  const pages = generatedPages();

  it.each(Object.keys(pages))("%s is what npm run docs:generate writes", (file) => {
    const committed = readFileSync(path.join(ROOT, file), "utf8");
    // On a difference: run `npm run docs:generate` and commit the page.
    expect(committed).toBe(pages[file]);
  });

  it("the CLI reference has every command's usage in a text block, nested commands included", () => {
    const page = pages["docs/cli.md"]!;
    for (const heading of ["## synthex init", "### synthex branch create", "### synthex shadow report", "## synthex eval"]) {
      expect(page).toContain(`\n${heading}\n`);
    }
    expect(page).toContain("```text\nUsage: synthex branch create [options] <name>");
    expect(page).not.toMatch(/```(sh|bash|shell)\n/);
    expect(Math.max(...page.split("\n").filter((l) => !l.startsWith("- ") && !l.startsWith("  - ")).map((l) => l.length))).toBeLessThanOrEqual(400);
  });

  it("the configuration page has a row for every variable of .env.example, each described", () => {
    const sections = parseEnvExample(readFileSync(path.join(ROOT, ".env.example"), "utf8"));
    const page = pages["docs/configuration.md"]!;
    const undescribed = sections.flatMap((s) => s.groups.filter((g) => !g.description).flatMap((g) => g.variables.map((v) => v.name)));
    expect(undescribed).toEqual([]);
    for (const section of sections) {
      for (const group of section.groups) {
        for (const v of group.variables) expect(page).toContain(`\`${v.name}=`);
      }
    }
  });
});

describe("parseEnvExample", () => {
  it("groups variables under the comment above them; a blank line or a new comment ends a group", () => {
    const text = [
      "# header, not a section",
      "# ---- first ----",
      "# Two variables",
      "# that share this text.",
      "# AA=1",
      "BB=",
      "# Another group.",
      "# CC=x|y",
      "",
      "# DD=4",
      "# ---- second -----------",
      "# E.",
      "# EE=https://e.example/?a=1",
    ].join("\n");
    expect(parseEnvExample(text)).toEqual([
      {
        title: "first",
        groups: [
          { description: "Two variables that share this text.", variables: [{ name: "AA", example: "1" }, { name: "BB", example: "" }] },
          { description: "Another group.", variables: [{ name: "CC", example: "x|y" }] },
          { description: "", variables: [{ name: "DD", example: "4" }] },
        ],
      },
      { title: "second", groups: [{ description: "E.", variables: [{ name: "EE", example: "https://e.example/?a=1" }] }] },
    ]);
  });

  it("refuses a variable before the first section", () => {
    expect(() => parseEnvExample("# AA=1\n# ---- s ----\n")).toThrow(/AA comes before the first section/);
  });
});
