"use client";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { BranchBar } from "@/components/branches/branch-bar";
import { useWorkspace } from "@/components/shell/workspace-context";
import { cn } from "@/components/ui/cn";

/** Overview · Canvas · Runs · Explore · Branches · Evals · Traffic, keeping the branch in the URL, and the branch picker. */
export function PipelineTabs({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const pathname = usePathname();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const tabs = [
    { href: base, label: "Overview", match: (p: string) => p === base },
    { href: `${base}/canvas`, label: "Canvas", match: (p: string) => p.startsWith(`${base}/canvas`) },
    { href: `${base}/runs`, label: "Runs", match: (p: string) => p.startsWith(`${base}/runs`) },
    {
      href: `${base}/explore`,
      label: "Explore",
      match: (p: string) => p.startsWith(`${base}/explore`) || p.startsWith(`${base}/records`),
    },
    { href: `${base}/branches`, label: "Branches", match: (p: string) => p.startsWith(`${base}/branches`) },
    { href: `${base}/evals`, label: "Evals", match: (p: string) => p.startsWith(`${base}/evals`) },
    { href: `${base}/traffic`, label: "Traffic", match: (p: string) => p.startsWith(`${base}/traffic`) },
  ];
  return (
    <div className="mb-6 flex flex-wrap items-end justify-between gap-2 border-b">
    <nav className="flex gap-1" aria-label="Pipeline">
      {tabs.map((t) => (
        <Link
          key={t.label}
          href={`${t.href}?branch=${encodeURIComponent(branch)}`}
          data-testid={`tab-${t.label.toLowerCase()}`}
          className={cn(
            "-mb-px border-b-2 px-3 py-2 text-sm font-medium text-muted-foreground hover:text-foreground",
            t.match(pathname) ? "border-primary text-foreground" : "border-transparent",
          )}
        >
          {t.label}
        </Link>
      ))}
    </nav>
    <div className="pb-1.5">
      <BranchBar pipelineId={pipelineId} />
    </div>
    </div>
  );
}
