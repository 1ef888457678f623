import type { Metadata } from "next";
import { notFound, redirect } from "next/navigation";
import { Markdown } from "@/components/docs/markdown";
import { readDoc } from "@/server/services/docs";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ slug: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const page = await readDoc((await params).slug);
  return { title: `${page?.title ?? "Not found"} · Synthex docs` };
}

/** /docs/<slug>: docs/<slug>.md. */
export default async function DocPage({ params }: Props) {
  const { slug } = await params;
  if (slug === "index") redirect("/docs");
  const page = await readDoc(slug);
  if (!page) notFound();
  return <Markdown markdown={page.markdown} />;
}
