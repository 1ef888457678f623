/** The Zep API over a Synthex pipeline (server/compat/zep.ts): `new ZepClient({ apiKey: "sx_…", baseUrl: "<app>/compat/zep" })`. */
import { zepRoute } from "@/server/compat/zep";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { zepRoute as GET, zepRoute as POST, zepRoute as PUT, zepRoute as PATCH, zepRoute as DELETE };
