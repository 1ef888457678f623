/** /docs/files/<path>: the images the docs pages show (docs/<path>; images only, nothing outside docs/). */
import { readDocAsset } from "@/server/services/docs";

export const dynamic = "force-dynamic";

export async function GET(_request: Request, { params }: { params: Promise<{ path: string[] }> }) {
  const asset = await readDocAsset((await params).path.join("/"));
  if (!asset) return Response.json({ error: "No such docs image." }, { status: 404 });
  return new Response(new Uint8Array(asset.body), {
    headers: {
      "Content-Type": asset.contentType,
      "Cache-Control": "public, max-age=300",
      // An SVG opened on its own runs nothing: no scripts, no requests.
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
