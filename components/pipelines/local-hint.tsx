"use client";
import { useQuery } from "@tanstack/react-query";
import { Terminal } from "lucide-react";
import Link from "next/link";
import { useTRPC } from "@/lib/trpc";

/** The workspace the CLI works in on this machine (server/services/local-workspace.ts). */
const LOCAL_SLUG = "local";

/**
 * On another workspace's pipelines page: what this machine's CLI already made, in the Local
 * workspace ("Local: 1 pipeline made with the CLI — open it"). Shown to members of Local only (the
 * first account on the machine), and only when Local has pipelines.
 */
export function LocalWorkspaceHint({ currentSlug }: { currentSlug: string }) {
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const local = currentSlug === LOCAL_SLUG ? undefined : workspaces.data?.find((w) => w.slug === LOCAL_SLUG);
  const pipelines = useQuery({ ...trpc.pipeline.list.queryOptions({ workspaceId: local?.id ?? "" }), enabled: !!local });
  if (!local || !pipelines.data?.length) return null;
  const n = pipelines.data.length;
  const only = n === 1 ? pipelines.data[0]! : null;
  const href = only ? `/w/${LOCAL_SLUG}/pipelines/${only.id}` : `/w/${LOCAL_SLUG}/pipelines`;
  return (
    <div data-testid="local-cli-hint" className="mb-4 flex items-center gap-2 rounded-md border bg-muted/40 px-3 py-2 text-sm">
      <Terminal className="size-4 text-muted-foreground" />
      <span>
        {local.name}: {n} {n === 1 ? "pipeline" : "pipelines"} made with the CLI{only ? ` (${only.name})` : ""} —{" "}
        <Link href={href} className="font-medium underline" data-testid="local-cli-hint-open">
          open {n === 1 ? "it" : "them"}
        </Link>
      </span>
    </div>
  );
}
