"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { cn } from "@/components/ui/cn";

/** The docs sidebar: every page, in docs/index.md's order (server/services/docs.ts `listDocs`). */
export function DocsNav({ pages }: { pages: Array<{ slug: string; title: string }> }) {
  const pathname = usePathname();
  return (
    <nav className="flex flex-col gap-0.5" data-testid="docs-sidebar" aria-label="Documentation">
      {pages.map((p) => {
        const href = p.slug === "index" ? "/docs" : `/docs/${p.slug}`;
        const active = pathname === href;
        return (
          <Link
            key={p.slug}
            href={href}
            aria-current={active ? "page" : undefined}
            className={cn(
              "rounded-md px-2 py-1.5 text-sm text-muted-foreground hover:bg-accent hover:text-accent-foreground",
              active && "bg-accent font-medium text-accent-foreground",
            )}
          >
            {p.title}
          </Link>
        );
      })}
    </nav>
  );
}
