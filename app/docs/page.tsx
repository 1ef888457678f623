import type { Metadata } from "next";
import Link from "next/link";
import { Markdown } from "@/components/docs/markdown";
import { listDocs, readDoc } from "@/server/services/docs";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  const index = await readDoc("index");
  return { title: `${index?.title ?? "Documentation"} · Synthex docs` };
}

/** docs/index.md (the map of the docs), or the list of pages when there is none. */
export default async function DocsIndex() {
  const index = await readDoc("index");
  if (index) return <Markdown markdown={index.markdown} />;
  const pages = await listDocs();
  return (
    <div data-testid="docs-content">
      <h1 className="mb-4 text-3xl font-semibold tracking-tight">Documentation</h1>
      <ul className="ml-6 list-disc space-y-1">
        {pages.map((p) => (
          <li key={p.slug}>
            <Link href={`/docs/${p.slug}`} className="font-medium text-primary underline underline-offset-4">
              {p.title}
            </Link>
          </li>
        ))}
      </ul>
    </div>
  );
}
