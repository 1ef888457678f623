import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/server/auth/options";
import { apiBodyLimit, withBodyLimit } from "@/server/http/body-limit";

const handler = NextAuth(authOptions) as (req: NextRequest, context: { params: Promise<{ nextauth: string[] }> }) => Promise<Response>;
// Sign-in forms are tiny: bodies over SYNTHEX_MAX_BODY_BYTES get a 413 before next-auth reads them.
const limited = withBodyLimit(handler, apiBodyLimit, (url, init) => new NextRequest(url, init as ConstructorParameters<typeof NextRequest>[1]));

export { limited as GET, limited as POST };
