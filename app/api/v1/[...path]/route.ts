/** REST `/api/v1/*`: the tRPC procedures that declare `meta.rest` (see server/api/rest.ts and server/api/rest-route.ts). */
import { restRouteHandler } from "@/server/api/rest-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { restRouteHandler as GET, restRouteHandler as POST, restRouteHandler as DELETE };
