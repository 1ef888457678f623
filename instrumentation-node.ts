/**
 * The Node.js half of instrumentation.ts: imported only when NEXT_RUNTIME is "nodejs", so the Edge
 * bundle of instrumentation.ts never sees Node-only APIs (process.exit, sockets).
 */
export async function registerNode() {
  // Before Next handles a request: per-address limits need the socket peer, which route handlers never see.
  const { installPeerStamp } = await import("./server/http/client-address");
  installPeerStamp();
  // Shadow traffic answers its copies only while no request is in flight (issue 37).
  const { countLiveHttpRequests } = await import("./server/services/live-requests");
  countLiveHttpRequests();
  const { startAppServer } = await import("./server/services/app-server");
  try {
    startAppServer();
  } catch (err) {
    // Next would keep listening and answer every request with 500: stop, saying what to fix.
    console.error(`[synthex] cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
