/**
 * Hand-written SQL that Prisma cannot express (HNSW indexes, generated tsvector columns, GIN
 * indexes on them, CHECK constraints...) lives in migrations between markers:
 *
 *   -- synthex:manual begin
 *   CREATE INDEX "Record_embedding_hnsw" ON "Record" USING hnsw ("embedding" vector_cosine_ops);
 *   -- synthex:manual end
 *
 * (or a single statement preceded by a line `-- synthex:manual`). Prisma does not know these
 * objects, so every generated diff proposes dropping them. `filterGeneratedSql` removes,
 * from a diff Prisma generated, the statements (and ALTER TABLE clauses, and warnings) that
 * touch objects created in manual blocks: indexes, columns, constraints and tables.
 */

export interface ManualObjects {
  tables: Set<string>;
  /** `table.column` */
  columns: Set<string>;
  indexes: Set<string>;
  constraints: Set<string>;
}

const BEGIN = /^\s*--\s*synthex:manual\s+begin\b/i;
const END = /^\s*--\s*synthex:manual\s+end\b/i;
const SINGLE = /^\s*--\s*synthex:manual\s*$/i;

/** Splits SQL into statements (each with its leading comments), respecting quotes, dollar quotes and comments. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    const next = sql[i + 1];
    if (ch === "-" && next === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl + 1;
    } else if (ch === "/" && next === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === ch && sql[j + 1] === ch) j += 2;
        else if (sql[j] === ch) break;
        else j++;
      }
      i = j + 1;
    } else if (ch === "$") {
      const m = /^\$[A-Za-z_0-9]*\$/.exec(sql.slice(i));
      if (m) {
        const end = sql.indexOf(m[0], i + m[0].length);
        i = end === -1 ? sql.length : end + m[0].length;
      } else i++;
    } else if (ch === ";") {
      out.push(sql.slice(start, i + 1));
      i++;
      start = i;
    } else i++;
  }
  if (sql.slice(start).trim()) out.push(sql.slice(start));
  return out;
}

function stripComments(sql: string): string {
  return sql
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/--[^\n]*/g, " ")
    .trim();
}

/** Statements inside manual markers. */
export function manualStatements(sql: string): string[] {
  const lines = sql.split(/\r?\n/);
  const chunks: string[] = [];
  let inBlock = false;
  let block: string[] = [];
  let single: string[] | null = null;
  for (const line of lines) {
    if (BEGIN.test(line)) {
      inBlock = true;
      block = [];
      continue;
    }
    if (END.test(line)) {
      if (inBlock) chunks.push(block.join("\n"));
      inBlock = false;
      continue;
    }
    if (inBlock) {
      block.push(line);
      continue;
    }
    if (SINGLE.test(line)) {
      single = [];
      continue;
    }
    if (single) {
      single.push(line);
      if (/;\s*(--.*)?$/.test(line)) {
        chunks.push(single.join("\n"));
        single = null;
      }
    }
  }
  if (inBlock) chunks.push(block.join("\n"));
  return chunks.flatMap(splitStatements).map(stripComments).filter(Boolean);
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z_0-9$]*)`;
const QNAME = String.raw`(?:${IDENT}\s*\.\s*)?(${IDENT})`;

/** `"Foo"` -> `Foo`, `foo` / `FOO` -> `foo` (Postgres folding). */
function ident(raw: string): string {
  return raw.startsWith('"') ? raw.slice(1, -1).replace(/""/g, '"') : raw.toLowerCase();
}

/** Splits on commas at parenthesis depth 0, outside quotes. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

const RE_CREATE_INDEX = new RegExp(
  String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?${QNAME}`,
  "i",
);
const RE_CREATE_TABLE = new RegExp(String.raw`^CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${QNAME}`, "i");
const RE_ALTER_TABLE = new RegExp(String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${QNAME}\s+([\s\S]*?);?$`, "i");
const RE_DROP_INDEX = new RegExp(String.raw`^DROP\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+EXISTS\s+)?${QNAME}`, "i");
const RE_DROP_TABLE = new RegExp(String.raw`^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${QNAME}`, "i");
const RE_CLAUSE_CONSTRAINT = new RegExp(
  String.raw`^(?:ADD|DROP|ALTER|VALIDATE|RENAME)\s+CONSTRAINT\s+(?:IF\s+EXISTS\s+)?(${IDENT})`,
  "i",
);
const RE_CLAUSE_COLUMN = new RegExp(
  String.raw`^(?:ADD|DROP|ALTER|RENAME)\s+(?:COLUMN\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(${IDENT})`,
  "i",
);
const RE_ADD_CONSTRAINT_UNNAMED = /^ADD\s+(?:CHECK|UNIQUE|PRIMARY|FOREIGN|EXCLUDE)\b/i;

export function emptyManualObjects(): ManualObjects {
  return { tables: new Set(), columns: new Set(), indexes: new Set(), constraints: new Set() };
}

/** Objects created by manual blocks in these migrations. */
export function collectManualObjects(migrations: Array<{ sql: string }>): ManualObjects {
  const found = emptyManualObjects();
  for (const { sql } of migrations) {
    for (const stmt of manualStatements(sql)) {
      let m: RegExpExecArray | null;
      if ((m = RE_CREATE_INDEX.exec(stmt))) found.indexes.add(ident(m[1]));
      else if ((m = RE_CREATE_TABLE.exec(stmt))) found.tables.add(ident(m[1]));
      else if ((m = RE_ALTER_TABLE.exec(stmt))) {
        const table = ident(m[1]);
        for (const clause of splitTopLevel(m[2])) {
          let c: RegExpExecArray | null;
          if ((c = RE_CLAUSE_CONSTRAINT.exec(clause))) found.constraints.add(ident(c[1]));
          else if (RE_ADD_CONSTRAINT_UNNAMED.test(clause)) continue;
          else if (/^ADD\b/i.test(clause) && (c = RE_CLAUSE_COLUMN.exec(clause))) found.columns.add(`${table}.${ident(c[1])}`);
        }
      }
    }
  }
  return found;
}

function touchesManual(stmt: string, manual: ManualObjects): boolean | string {
  let m: RegExpExecArray | null;
  if ((m = RE_DROP_INDEX.exec(stmt)) || (m = RE_CREATE_INDEX.exec(stmt))) return manual.indexes.has(ident(m[1]));
  if ((m = RE_DROP_TABLE.exec(stmt)) || (m = RE_CREATE_TABLE.exec(stmt))) return manual.tables.has(ident(m[1]));
  if ((m = /^ALTER\s+INDEX\s+(?:IF\s+EXISTS\s+)?/i.exec(stmt))) {
    const rest = new RegExp(`^${QNAME}`).exec(stmt.slice(m[0].length));
    return rest ? manual.indexes.has(ident(rest[1])) : false;
  }
  if ((m = RE_ALTER_TABLE.exec(stmt))) {
    const table = ident(m[1]);
    if (manual.tables.has(table)) return true;
    const clauses = splitTopLevel(m[2]);
    const kept = clauses.filter((clause) => {
      let c: RegExpExecArray | null;
      if ((c = RE_CLAUSE_CONSTRAINT.exec(clause))) return !manual.constraints.has(ident(c[1]));
      if ((c = RE_CLAUSE_COLUMN.exec(clause))) return !manual.columns.has(`${table}.${ident(c[1])}`);
      return true;
    });
    if (kept.length === clauses.length) return false;
    if (kept.length === 0) return true;
    // stmt ends with ";" (see filterGeneratedSql) and m[2] is everything between the table and it.
    const head = stmt.slice(0, stmt.length - 1 - m[2].length);
    return `${head.trimEnd()} ${kept.join(",\n")};`;
  }
  return false;
}

/** Names (as they appear in Prisma's warnings, between backticks) of the manual objects. */
function manualNames(manual: ManualObjects): Set<string> {
  const names = new Set<string>([...manual.tables, ...manual.indexes, ...manual.constraints]);
  for (const tc of manual.columns) names.add(tc.slice(tc.indexOf(".") + 1));
  return names;
}

/**
 * Removes from Prisma-generated migration SQL everything that touches manual objects.
 * Returns "" when nothing executable is left (Prisma's "-- This is an empty migration." included).
 */
export function filterGeneratedSql(sql: string, manual: ManualObjects): string {
  const names = manualNames(manual);
  // Prisma puts all data-loss warnings in one comment at the top: keep it apart from the statements.
  const warnings = /^\s*\/\*\s*\n\s*Warnings:[\s\S]*?\*\/[ \t]*\n?/.exec(sql);
  const statements = warnings ? sql.slice(warnings[0].length) : sql;
  const kept: string[] = [];
  for (const chunk of splitStatements(statements)) {
    const body = stripComments(chunk);
    if (!body) continue; // comments only (e.g. "-- This is an empty migration.")
    const verdict = touchesManual(`${body.replace(/;\s*$/, "")};`, manual);
    if (verdict === true) continue;
    if (typeof verdict === "string") {
      const at = chunk.indexOf(body.slice(0, 20));
      kept.push(`${chunk.slice(0, at)}${verdict}`);
    } else kept.push(chunk);
  }
  if (kept.length === 0) return "";
  const head = warnings ? filterWarnings(warnings[0].trim(), names) : "";
  const text = kept.join("").replace(/^\s+/, "").trimEnd();
  return head ? `${head}\n\n${text}\n` : `${text}\n`;
}

/** Drops warning bullets about manual objects from Prisma's `/* Warnings: ... *\/` comment ("" if none is left). */
function filterWarnings(block: string, names: Set<string>): string {
  const bullets = block.split("\n").filter((l) => /^\s*- /.test(l));
  const keep = bullets.filter((l) => ![...l.matchAll(/`([^`]+)`/g)].some((m) => names.has(m[1])));
  if (keep.length === bullets.length) return block;
  if (keep.length === 0) return "";
  return `/*\n  Warnings:\n\n${keep.join("\n")}\n\n*/`;
}
