/**
 * `.env.example`, read as the one list of Synthex's environment variables: sections
 * (`# ---- name ----`), and groups of variables (`# NAME=example`, commented out or not) each
 * described by the comment lines right above them. A blank line ends a group. Lines before the first
 * section are the file's own header. scripts/env-example.test.ts checks the list against the code,
 * scripts/docs/configuration.ts renders docs/configuration.md from it.
 */

export interface EnvVariable {
  name: string;
  /** The value the file shows (an example or the default), "" when none. */
  example: string;
}

export interface EnvGroup {
  description: string;
  variables: EnvVariable[];
}

export interface EnvSection {
  title: string;
  groups: EnvGroup[];
}

const SECTION = /^#\s*-{3,}\s*(.+?)\s*-+\s*$/;
const VARIABLE = /^#?\s*([A-Z][A-Z0-9_]+)=(.*)$/;

export function parseEnvExample(text: string): EnvSection[] {
  const sections: EnvSection[] = [];
  let comment: string[] = [];
  let group: EnvGroup | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const section = SECTION.exec(line);
    const variable = VARIABLE.exec(line);
    if (section) {
      sections.push({ title: section[1]!, groups: [] });
      comment = [];
      group = null;
    } else if (variable) {
      const current = sections.at(-1);
      if (!current) throw new Error(`.env.example: ${variable[1]} comes before the first section (# ---- name ----)`);
      if (!group) {
        group = { description: comment.join(" ").replace(/\s+/g, " ").trim(), variables: [] };
        current.groups.push(group);
        comment = [];
      }
      group.variables.push({ name: variable[1]!, example: variable[2]!.trim() });
    } else if (line.startsWith("#")) {
      if (group) group = null;
      comment.push(line.replace(/^#\s?/, ""));
    } else if (line === "") {
      comment = [];
      group = null;
    }
  }
  return sections;
}

/** Every variable's name, in file order. */
export const envVariableNames = (sections: EnvSection[]): string[] => sections.flatMap((s) => s.groups.flatMap((g) => g.variables.map((v) => v.name)));
