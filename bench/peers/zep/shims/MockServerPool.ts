/**
 * Synthex's stand-in (not from getzep/zep-js) for the wire suite's `tests/mock-server/MockServerPool`:
 * the same `mockServerPool.createServer().mockEndpoint()…build()` surface, but nothing is mocked.
 * `baseUrl` is Synthex's /compat/zep (ZEP_HOST), so each test's client call reaches the real server;
 * the canned bodies the tests declare are ignored (the response is checked with the SDK's own schemas
 * instead, see Client.ts).
 */
interface Stage {
  [step: string]: (...args: unknown[]) => Stage | { build(): void };
}

function builder(): Stage {
  const stage: Stage = new Proxy({} as Stage, {
    get: (_t, prop) => (prop === "build" ? () => undefined : () => stage),
  });
  return stage;
}

class SynthexServer {
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }
  mockEndpoint(): Stage {
    return builder();
  }
}

class SynthexServerPool {
  createServer(): SynthexServer {
    const host = process.env.ZEP_HOST;
    if (!host) throw new Error("ZEP_HOST is not set (run the suite with npm run bench:peers:zep).");
    return new SynthexServer(host);
  }
  getServers(): SynthexServer[] {
    return [];
  }
  listen(): void {}
  close(): void {}
}

export const mockServerPool = new SynthexServerPool();
