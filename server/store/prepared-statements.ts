/**
 * Named (prepared) statements for the reads on every search's path, on PostgreSQL.
 *
 * `@prisma/adapter-pg` sends each query unnamed: PostgreSQL parses, analyses and plans it on every
 * call. Its `statementNameGenerator` option names a query instead, and `pg` then parses it once
 * per connection and later sends only Bind/Execute; after five executions PostgreSQL may keep a
 * generic plan and stop planning it. The BM25 read alone took ~1–2 ms to plan per search, more
 * than its execution on a small branch.
 *
 * Only statements registered here with `prepared(sql)` are named — a bounded set of texts
 * (MAX_PREPARED; past it a text runs unnamed), since each named statement stays prepared on every
 * connection of the pool until the connection closes. Never on the embedded database: its
 * connections share one PGlite session (pglite-wire-server.ts), where two connections preparing
 * the same name would collide. `SYNTHEX_DB_PREPARED=off` turns it off (e.g. behind a pooler in
 * transaction mode that does not track prepared statements).
 *
 * Only reads whose answer does not depend on the plan are registered (the HNSW read is not: an
 * approximate index scan, whose plan must stay the one planned for the call's own values).
 */
import { createHash } from "node:crypto";
import { processState } from "../core/process-state";

/** At most this many distinct statement texts are named per process. */
export const MAX_PREPARED = 256;

/**
 * Registered texts and their names, one map per process (server/core/process-state.ts): in
 * `npm start` the pool's adapter is made by the copy in Next's instrumentation bundle (it opens the
 * database first), while the direct /api/v1 path's search runs tsx's copy and each Next route (MCP,
 * tRPC) its own bundled one. With a map per copy, the adapter found none of their texts, and every
 * search an app server answered was parsed and planned again on each call (a REST search's database
 * CPU about 1.5× the same search called in-process).
 */
const names = processState("prepared-statements.names", () => new Map<string, string>());

/** Registers `sql` to be sent as a named statement (where the connection allows it); returns it unchanged. */
export function prepared(sql: string): string {
  if (names.size < MAX_PREPARED && !names.has(sql)) names.set(sql, `sx_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`);
  return sql;
}

/** Queries this process has sent named (the app server logs it on stop: a test reads it). */
const sent = processState("prepared-statements.sent", () => ({ named: 0 }));

/** The name of a registered statement; undefined (sent unnamed) for every other query. */
export function statementName(query: { sql: string }): string | undefined {
  const name = names.get(query.sql);
  if (name !== undefined) sent.named++;
  return name;
}

/** How many queries this process has sent as named statements so far. */
export function namedStatementsSent(): number {
  return sent.named;
}

/** Whether named statements are on for a (non-embedded) PostgreSQL connection: SYNTHEX_DB_PREPARED, default on. */
export function preparedStatementsOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.SYNTHEX_DB_PREPARED?.trim().toLowerCase();
  if (!raw || raw === "on" || raw === "1" || raw === "true") return true;
  if (raw === "off" || raw === "0" || raw === "false") return false;
  throw new Error(`SYNTHEX_DB_PREPARED must be "on" or "off" (got "${env.SYNTHEX_DB_PREPARED}").`);
}

/** `PrismaPg` options for a pool: statement names on PostgreSQL, none on the embedded database. */
export function pgAdapterOptions(embedded: boolean): { statementNameGenerator?: (query: { sql: string }) => string } {
  if (embedded || !preparedStatementsOn()) return {};
  // The adapter's type wants a string; undefined is what it passes to `pg` for an unnamed query.
  return { statementNameGenerator: statementName as (query: { sql: string }) => string };
}
