/**
 * The brief (Synapse's `/brief`): what an agent needs at the start of a turn for one scope — the
 * most recent turns it pushed (live sessions, open or just closed), the projection output (the
 * rolling memory, e.g. the world model or Synapse's rolling summary), every other projection (e.g.
 * the narrative state) and the server's clock, in one call.
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { resolveBranch } from "../store/pipelines";
import type { KeyRestrictions } from "./api-keys";
import { projection, type ProjectionResult } from "./projections";

export interface BriefTurn {
  sessionId: string;
  role: string;
  content: string;
  time: Date;
}

export interface Brief {
  scope: string;
  /** Newest last, at most `turns`. */
  recentTurns: BriefTurn[];
  openSessions: number;
  /** The projection output read (the first projection of the spec unless one is named); null when the spec has none. */
  projection: ProjectionResult | null;
  /** Every projection output of the spec for the scope, in spec order (Synapse: rolling summary and narrative state). */
  projections: ProjectionResult[];
  /** The server's clock: the temporal authority an agent resolves "yesterday" against. */
  now: Date;
}

export async function brief(
  db: Db,
  input: { workspaceId: string; pipelineId: string; branch: string; scope: string; output?: string; turns?: number; restrictions?: KeyRestrictions | null },
): Promise<Brief> {
  const scope = input.scope.trim();
  if (!scope) throw badRequest("scope: the brief is per scope, e.g. acme:user-42.");
  const turns = Math.min(200, Math.max(1, input.turns ?? 20));
  const ctx = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch);
  const names = ctx.spec.outputs.filter((o) => o.surface === "projection").map((o) => o.name);
  const output = input.output ?? names[0];
  const now = new Date();
  const options = { workspaceId: ctx.workspaceId, now, restrictions: input.restrictions };
  const [messages, openSessions, projected, all] = await Promise.all([
    db.ingestMessage.findMany({
      where: { workspaceId: ctx.workspaceId, session: { pipelineId: ctx.pipelineId, scope } },
      orderBy: [{ time: "desc" }, { position: "desc" }],
      take: turns,
      select: { role: true, content: true, time: true, session: { select: { sessionId: true } } },
    }),
    db.ingestSession.count({ where: { workspaceId: ctx.workspaceId, pipelineId: ctx.pipelineId, scope, status: "open" } }),
    output ? projection(db, ctx.pipelineId, ctx.branchName, output, scope, options) : Promise.resolve(null),
    Promise.all(names.map((name) => projection(db, ctx.pipelineId, ctx.branchName, name, scope, options))),
  ]);
  return {
    scope,
    recentTurns: messages.reverse().map((m) => ({ sessionId: m.session.sessionId, role: m.role, content: m.content, time: m.time })),
    openSessions,
    projection: projected,
    projections: all,
    now,
  };
}
