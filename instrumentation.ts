/** Next.js calls `register` once per server process: see server/services/app-server.ts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startAppServer } = await import("./server/services/app-server");
  startAppServer();
}
