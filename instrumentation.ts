/** Next.js calls `register` once per server process: see server/services/app-server.ts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Before Next handles a request: per-address limits need the socket peer, which route handlers never see.
  const { installPeerStamp } = await import("./server/http/client-address");
  installPeerStamp();
  const { startAppServer } = await import("./server/services/app-server");
  try {
    startAppServer();
  } catch (err) {
    // Next would keep listening and answer every request with 500: stop, saying what to fix.
    console.error(`[synthex] cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
