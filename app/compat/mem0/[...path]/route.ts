/** The Mem0 platform API over a Synthex pipeline (server/compat/mem0.ts): `new MemoryClient({ apiKey: "sx_…", host: "<app>/compat/mem0" })`. */
import { mem0Route } from "@/server/compat/mem0";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// PATCH too: the client's updateProject sends one, and gets a 400 saying what to use, not Next's empty 405.
export { mem0Route as GET, mem0Route as POST, mem0Route as PUT, mem0Route as PATCH, mem0Route as DELETE };
