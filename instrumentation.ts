/** Next.js calls `register` once per server process: see server/services/app-server.ts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startAppServer } = await import("./server/services/app-server");
  try {
    startAppServer();
  } catch (err) {
    // Next would keep listening and answer every request with 500: stop, saying what to fix.
    console.error(`[synthex] cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
