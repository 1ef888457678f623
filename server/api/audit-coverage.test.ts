/**
 * Issue 30, item 6: every change is audited or says why not. Each mutating tRPC procedure and
 * each REST POST/DELETE route declares `meta.audit` (server/api/trpc.ts `AuditDeclaration`): an
 * entry the middleware writes, an entry a named service writes itself, or `{ none: reason }`.
 * The `none` and `writtenBy` declarations are listed here too, so adding one is a reviewed change.
 * Route files outside tRPC (app/api/**\/route.ts, app/compat/**\/route.ts) that take POST/DELETE are listed with how they are audited.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRestEndpoints } from "./rest-app";
import { appRouter } from "./root";
import { createTRPCRouter, workspaceProcedure, type ProcedureMeta } from "./trpc";

type Procedures = Record<string, { _def: { type: string; meta?: ProcedureMeta } }>;
/** tRPC keeps the flat "router.procedure" map on _def (typed as the nested record). */
const proceduresOf = (router: { _def: { procedures: unknown } }) => router._def.procedures as Procedures;

/** Mutations that declare nothing about the audit log (the check this file makes). */
function undeclared(router: { _def: { procedures: unknown } }): string[] {
  return Object.entries(proceduresOf(router))
    .filter(([, p]) => p._def.type === "mutation" && !p._def.meta?.audit)
    .map(([name]) => name);
}

function declarations(kind: "none" | "writtenBy"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, p] of Object.entries(proceduresOf(appRouter))) {
    const audit = p._def.meta?.audit as Record<string, unknown> | undefined;
    if (audit && typeof audit[kind] === "string") out[name] = audit[kind];
  }
  return out;
}

/** Reviewed: no entry, each for the reason its procedure gives. */
const NO_AUDIT = ["user.signUp", "user.updateProfile", "user.signOutEverywhere", "provider.testConnection", "search.search", "search.ask", "ingest.messages"];
/** Reviewed: the service writes the entry itself (in its transaction). */
const WRITTEN_BY_SERVICE = ["record.purge", "record.purgeScope"];

/** Reviewed: every route file taking POST/DELETE besides tRPC's procedures, and how its changes are audited. */
const ROUTE_FILES: Record<string, string> = {
  "app/api/auth/[...nextauth]/route.ts": "sign-in and sign-out (next-auth): sessions, no workspace change",
  "app/api/inngest/route.ts": "Inngest's calls into its functions: runs they create are audited by createRun(auditTrigger)",
  "app/api/mcp/route.ts": "MCP tools call the tRPC procedures through a caller: their meta.audit applies",
  "app/api/trpc/[trpc]/route.ts": "the tRPC procedures: their meta.audit",
  "app/api/v1/[...path]/route.ts": "REST over the tRPC procedures (checked below)",
  "app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route.ts": "importFile(actor) writes source.import",
  "app/compat/mem0/[...path]/route.ts": "the Mem0 API calls the tRPC procedures through a caller (server/compat/mem0.ts): their meta.audit applies",
  "app/compat/zep/[...path]/route.ts": "the Zep API calls the tRPC procedures through a caller (server/compat/zep.ts): their meta.audit applies",
};

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(full) : e.name === "route.ts" ? [full] : [];
  });
}

describe("audit coverage", () => {
  it("every mutating procedure declares an audit entry, a service that writes it, or none with a reason", () => {
    expect(undeclared(appRouter)).toEqual([]);
    const none = declarations("none");
    expect(Object.keys(none).sort()).toEqual([...NO_AUDIT].sort());
    for (const [name, reason] of Object.entries(none)) expect(reason.length, `${name}: give the reason`).toBeGreaterThan(20);
    expect(Object.keys(declarations("writtenBy")).sort()).toEqual([...WRITTEN_BY_SERVICE].sort());
    for (const [name, p] of Object.entries(proceduresOf(appRouter))) {
      const audit = p._def.meta?.audit;
      if (audit && "action" in audit) expect(audit.action, name).toMatch(/^[a-z][a-zA-Z]*(\.[a-z][a-zA-Z]*)?$/);
      // The workspace and user middlewares write entries (server/api/trpc.ts); outside a workspace procedure the entry names its workspace.
      if (audit && "target" in audit) expect(["workspace", "user"], `${name}: no middleware writes its entry`).toContain(p._def.meta?.access);
      if (audit && "target" in audit && p._def.meta?.access !== "workspace") expect(audit.workspaceId, `${name}: audit.workspaceId`).toBeTypeOf("function");
    }
  });

  it("every REST POST/DELETE route declares one too (a POST query such as search says why it has none)", () => {
    const writes = appRestEndpoints().filter((e) => e.route.method !== "GET");
    expect(writes.length).toBeGreaterThan(5);
    const procedures = proceduresOf(appRouter);
    const missing = writes.filter((e) => !procedures[e.procedure]?._def.meta?.audit).map((e) => `${e.route.method} ${e.route.path}`);
    expect(missing).toEqual([]);
  });

  it("every route file that takes POST/DELETE is reviewed here", () => {
    const root = path.resolve(import.meta.dirname, "../..");
    const writing = [...routeFiles(path.join(root, "app/api")), ...routeFiles(path.join(root, "app/compat"))]
      .filter((f) => /export\s+(async\s+function|const)\s+(POST|DELETE|PUT|PATCH)\b|export\s*\{[^}]*\bas\s+(POST|DELETE|PUT|PATCH)\b/.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(root, f).split(path.sep).join("/"))
      .sort();
    expect(writing).toEqual(Object.keys(ROUTE_FILES).sort());
  });

  it("the check finds a mutation that declares nothing", () => {
    const router = createTRPCRouter({
      silent: workspaceProcedure("pipelines:write").input(z.object({})).mutation(() => 1),
      declared: workspaceProcedure("pipelines:write").meta({ audit: { none: "a test procedure that changes nothing at all" } }).mutation(() => 1),
      read: workspaceProcedure("pipelines:read").query(() => 1),
    });
    expect(undeclared(router)).toEqual(["silent"]);
  });
});
