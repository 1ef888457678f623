/**
 * The Mem0 shapes both of Mem0's paths answer (server/compat/mem0.ts over a memory step,
 * server/compat/mem0-derived.ts over a pipeline's derived records): a memory, its filterable
 * fields, and the JSON body of a request.
 */
import { CompatError, entitiesOf } from "./binding";

export const refuse = (message: string) => new CompatError(400, message);

export interface MemoryLike {
  memoryId: string;
  content: string;
  scope: string;
  createdAt: Date | string;
  updatedAt: Date | string;
  event?: string;
  metadata?: Record<string, unknown>;
}

/** Mem0's `metadata` of a memory: its attributes (set by update), else null. */
function attributesOf(m: MemoryLike): Record<string, unknown> | null {
  const a = m.metadata?.attributes;
  return a && typeof a === "object" && !Array.isArray(a) ? (a as Record<string, unknown>) : null;
}

/** A memory in Mem0's shape; the entity ids come back from the scope. */
export function memoryJson(m: MemoryLike, extra: Record<string, unknown> = {}) {
  const e = entitiesOf(m.scope);
  return {
    id: m.memoryId,
    memory: m.content,
    user_id: e.user ?? null,
    agent_id: e.agent ?? null,
    app_id: e.app ?? null,
    run_id: e.run ?? null,
    metadata: attributesOf(m),
    categories: [],
    created_at: new Date(m.createdAt).toISOString(),
    updated_at: new Date(m.updatedAt).toISOString(),
    expiration_date: null,
    structured_attributes: { scope: m.scope },
    ...extra,
  };
}

export const filterable = (m: MemoryLike) => ({ entities: entitiesOf(m.scope), createdAt: new Date(m.createdAt), updatedAt: new Date(m.updatedAt) });

export async function body(req: Request): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CompatError(400, `The body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new CompatError(400, "The body must be a JSON object.");
  return parsed as Record<string, unknown>;
}

