/**
 * `synthex keys create|list|revoke`: API keys of the CLI's workspace, for agents and for `--url`,
 * through the same procedures as Settings → API keys. A secret is printed once, at creation.
 */
import { Option, type Command } from "commander";
import type { BranchCliDeps, BranchGlobalOptions } from "./branch";
import { table } from "./output";

const print = (opts: BranchGlobalOptions, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());

function restrictionText(k: { readOnly: boolean; scopePrefix: string | null; pipelines: string[] }): string {
  return [k.readOnly ? "read-only" : "", k.scopePrefix ? `scope ${k.scopePrefix}` : "", k.pipelines.length ? `pipelines ${k.pipelines.join(", ")}` : ""]
    .filter(Boolean)
    .map((t) => `, ${t}`)
    .join("");
}

export function registerKeyCommands(program: Command, deps: Omit<BranchCliDeps, "selectBranch">) {
  const { action } = deps;
  const keys = program.command("keys").description("API keys of the CLI's workspace (for agents and --url)");
  keys
    .command("create <name>")
    .description("create a key and print its secret (shown once)")
    .option("--read-only", "reads only: search, ask, records; no ingest, runs or other writes")
    .option("--scope <prefix>", "reach only this scope prefix, e.g. acme:eng (and acme:eng:*)")
    // --pipeline is also the global option: its value (one, or several comma-separated) is read from either.
    .option("--pipeline <names>", "reach only these pipelines (comma-separated)")
    .addOption(new Option("--role <role>", "the key's role").choices(["admin", "editor", "viewer"]).default("editor"))
    .action(
      action(async (conn, opts, name: string) => {
        const o = opts as BranchGlobalOptions & { readOnly?: boolean; scope?: string; role: "editor" };
        const pipelines = (o.pipeline ?? "").split(",").map((p) => p.trim()).filter(Boolean);
        const key = await conn.api.apiKey.create.mutate({ workspaceId: conn.workspaceId, name, role: o.role, readOnly: Boolean(o.readOnly), scopePrefix: o.scope, pipelines });
        print(opts, key, () =>
          [
            `Created key "${key.name}" (${key.role}${restrictionText(key)}).`,
            key.secret,
            "Copy it now: it is not shown again. Use it as Authorization: Bearer <key>, or synthex --url <server> --api-key <key>.",
          ].join("\n"),
        );
      }),
    );
  keys
    .command("list")
    .description("the workspace's keys (never their secrets)")
    .action(
      action(async (conn, opts) => {
        const list = await conn.api.apiKey.list.query({ workspaceId: conn.workspaceId });
        print(opts, list, () =>
          list.length
            ? table(
                list.map((k) => ({
                  id: k.id,
                  name: k.name,
                  key: `${k.prefix}…`,
                  role: k.effectiveRole && k.effectiveRole !== k.role ? `${k.role} (acts as ${k.effectiveRole})` : k.role,
                  "created by": k.createdBy ? k.createdBy.email : "unknown",
                  restrictions: restrictionText(k).replace(/^, /, "") || "none",
                  "last used": k.lastUsedAt?.toISOString() ?? "never",
                  status: k.status === "inactive" ? "inactive (creator left)" : k.status,
                })),
              )
            : "No API keys yet. Create one: synthex keys create <name>",
        );
      }),
    );
  keys
    .command("revoke <id>")
    .description("revoke a key: it stops working at once")
    .action(
      action(async (conn, opts, id: string) => {
        const result = await conn.api.apiKey.revoke.mutate({ workspaceId: conn.workspaceId, keyId: id });
        print(opts, result, () => `Revoked key ${result.revoked}.`);
      }),
    );
}
