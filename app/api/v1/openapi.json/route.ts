/** The OpenAPI 3.1 document of `/api/v1`, generated from the procedures' zod schemas. */
import { appOpenApiDocument } from "@/server/api/rest-app";

export const dynamic = "force-dynamic";

export function GET() {
  return Response.json(appOpenApiDocument());
}
