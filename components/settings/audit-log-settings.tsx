"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { ScrollText } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { useTRPC } from "@/lib/trpc";

/** Settings → Audit log: who did what, newest first (owners and admins). */
export function AuditLogSettings() {
  const { workspace } = useWorkspace();
  const canRead = useCan("audit:read");
  const trpc = useTRPC();
  const [action, setAction] = useState("");
  const log = useInfiniteQuery({
    ...trpc.audit.list.infiniteQueryOptions(
      { workspaceId: workspace.id, action: action.trim() || undefined, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    enabled: canRead,
  });
  if (!canRead) {
    return (
      <>
        <PageHeader title="Audit log" />
        <EmptyState icon={ScrollText} title="Only owners and admins read the audit log" />
      </>
    );
  }
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <div className="max-w-5xl space-y-6">
      <PageHeader title="Audit log" description="Promotions, purges, API keys, members, providers and runs: who did what, and when." />
      <Input className="max-w-xs" placeholder="Filter by action, e.g. apiKey." value={action} onChange={(e) => setAction(e.target.value)} aria-label="Filter by action" />
      <Card>
        <CardContent>
          {entries.length ? (
            <Table data-testid="audit-log">
              <TableHeader>
                <TableRow>
                  <TableHead>Time</TableHead>
                  <TableHead>Actor</TableHead>
                  <TableHead>Action</TableHead>
                  <TableHead>Target</TableHead>
                  <TableHead>Details</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {entries.map((e) => (
                  <TableRow key={e.id}>
                    <TableCell className="whitespace-nowrap text-xs">{e.createdAt.toLocaleString()}</TableCell>
                    <TableCell className="text-xs" title={e.actor}>
                      {e.actorLabel || e.actor}
                    </TableCell>
                    <TableCell>
                      <Badge variant="outline">{e.action}</Badge>
                    </TableCell>
                    <TableCell className="max-w-56 truncate text-xs" title={e.target} data-testid="audit-target">
                      {e.targetLabel}
                    </TableCell>
                    <TableCell className="max-w-72 truncate font-mono text-xs text-muted-foreground">
                      {Object.keys(e.summary).length ? JSON.stringify(e.summary) : ""}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          ) : (
            <p className="py-6 text-center text-sm text-muted-foreground">{log.isLoading ? "Loading…" : "Nothing recorded yet."}</p>
          )}
          {log.hasNextPage ? (
            <div className="pt-3 text-center">
              <Button variant="outline" size="sm" disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>
                Older entries
              </Button>
            </div>
          ) : null}
        </CardContent>
      </Card>
    </div>
  );
}
