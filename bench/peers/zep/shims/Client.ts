/**
 * Synthex's stand-in (not from getzep/zep-js) for the wire suite's `src/Client`: the installed
 * `@getzep/zep-cloud` ZepClient, with only the connection changed (the key is ZEP_API_KEY, not the
 * suite's "test"). Every response body the SDK reads is parsed strictly with the SDK's own serializer
 * for it, with the SDK's own options (unrecognized keys, union members and enum values allowed) but
 * validation on: the SDK itself skips validation, so a body of the wrong shape would pass unseen.
 */
import { ZepClient as InstalledClient, serialization } from "@getzep/zep-cloud";

type ParseOpts = { skipValidation?: boolean; breadcrumbsPrefix?: string[] } & Record<string, unknown>;
interface SchemaLike {
  parse(raw: unknown, opts?: ParseOpts): { ok: boolean; errors?: Array<{ path: string[]; message: string }> };
  parseOrThrow(raw: unknown, opts?: ParseOpts): unknown;
}

const strict = new WeakSet<object>();

function validateResponses(ns: unknown, seen = new Set<unknown>()): void {
  if (!ns || typeof ns !== "object" || seen.has(ns)) return;
  seen.add(ns);
  const schema = ns as Partial<SchemaLike>;
  if (typeof schema.parse === "function" && typeof schema.parseOrThrow === "function" && !strict.has(ns)) {
    strict.add(ns);
    const original = schema.parseOrThrow.bind(schema);
    const parse = schema.parse.bind(schema);
    (ns as SchemaLike).parseOrThrow = (raw, opts) => {
      if (opts?.breadcrumbsPrefix?.[0] === "response" && opts.skipValidation) {
        const checked = parse(raw, { ...opts, skipValidation: false });
        if (!checked.ok) {
          const why = (checked.errors ?? []).map((e) => `${e.path.join(".")}: ${e.message}`).join("; ");
          throw new Error(`Response does not match the SDK's schema: ${why}`);
        }
      }
      return original(raw, opts);
    };
    return;
  }
  for (const value of Object.values(ns)) validateResponses(value, seen);
}
validateResponses(serialization);

export class ZepClient extends InstalledClient {
  constructor(options: ConstructorParameters<typeof InstalledClient>[0]) {
    super({ ...options, apiKey: process.env.ZEP_API_KEY ?? "" });
  }
}
