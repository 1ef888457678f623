import Link from "next/link";
import type { ReactNode } from "react";
import { DocsNav } from "@/components/docs/docs-nav";
import { Button } from "@/components/ui/button";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { listDocs } from "@/server/services/docs";

// Read at request time: the pages are the docs/ folder as it is now (no rebuild after editing one).
export const dynamic = "force-dynamic";

/** /docs: the documentation, public like the repository's docs/ it shows (no sign-in; proxy.ts's Host check applies). */
export default async function DocsLayout({ children }: { children: ReactNode }) {
  const pages = await listDocs();
  return (
    <div className="flex min-h-screen flex-col">
      <header className="sticky top-0 z-10 flex h-14 shrink-0 items-center gap-2 border-b bg-background/95 px-6 backdrop-blur">
        <Link href="/docs" className="text-lg font-semibold tracking-tight">
          Synthex <span className="font-normal text-muted-foreground">docs</span>
        </Link>
        <span className="mr-auto" />
        <ThemeToggle />
        <Button asChild variant="outline" size="sm">
          <Link href="/">Open the app</Link>
        </Button>
      </header>
      <div className="flex flex-1">
        <aside className="sticky top-14 h-[calc(100vh-3.5rem)] w-60 shrink-0 overflow-y-auto border-r bg-sidebar p-3">
          <DocsNav pages={pages} />
        </aside>
        <main className="min-w-0 flex-1 px-10 py-8">
          <article className="mx-auto max-w-3xl">{children}</article>
        </main>
      </div>
    </div>
  );
}
