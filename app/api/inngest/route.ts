/** Inngest's endpoint: registration (PUT), introspection (GET) and step execution (POST). */
import { serve } from "inngest/next";
import { NextRequest } from "next/server";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest/functions";
import { inngestBodyLimit, withBodyLimit } from "@/server/http/body-limit";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handlers = serve({ client: inngest, functions });
// Step payloads carry memoized step results, so their limit is larger than the API's.
const limited = (handler: typeof handlers.POST) =>
  withBodyLimit(handler, inngestBodyLimit, (url, init) => new NextRequest(url, init as ConstructorParameters<typeof NextRequest>[1]));

export const GET = handlers.GET;
export const POST = limited(handlers.POST);
export const PUT = limited(handlers.PUT);
