/** Next.js calls `register` once per server process: see server/services/app-server.ts. */
export async function register() {
  // The Node-only part lives in its own file, imported behind this check, so the Edge Runtime build
  // does not warn about process.exit.
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { registerNode } = await import("./instrumentation-node");
    await registerNode();
  }
}
