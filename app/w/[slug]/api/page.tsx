import { headers } from "next/headers";
import { ApiReference } from "@/components/api/api-reference";
import { appOpenApiDocument } from "@/server/api/rest-app";

export const dynamic = "force-dynamic";

export default async function Page() {
  const h = await headers();
  const origin = `${h.get("x-forwarded-proto") ?? "http"}://${h.get("host") ?? "localhost:3000"}`;
  return <ApiReference doc={appOpenApiDocument()} origin={origin} />;
}
