"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { FolderInput } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";

/** Settings → Sources: an inbox folder on the server per pipeline source, watched while the app server runs. */
export function SourcesSettings() {
  const { workspace } = useWorkspace();
  const canManage = useCan("workspace:update");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const workspaceId = workspace.id;
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const inboxes = useQuery({ ...trpc.source.inboxes.queryOptions({ workspaceId }), enabled: canManage, refetchInterval: 3000 });
  const setInbox = useMutation(
    trpc.source.setInbox.mutationOptions({
      onSuccess: (r) => {
        toast.success(r.path ? `Watching ${r.path} for ${r.source}.` : `Inbox of ${r.source} cleared; its records stay.`);
        setDrafts((d) => {
          const next = { ...d };
          delete next[`${r.pipelineId}/${r.source}`];
          return next;
        });
        void queryClient.invalidateQueries({ queryKey: trpc.source.inboxes.queryKey() });
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  if (!canManage) {
    return (
      <>
        <PageHeader title="Sources" />
        <EmptyState icon={FolderInput} title="Only owners and admins set inbox folders" />
      </>
    );
  }
  const rows = inboxes.data ?? [];
  return (
    <div className="max-w-5xl space-y-6">
      <PageHeader
        title="Sources"
        description="An inbox folder on the server per source: notes, PDFs, documents, images and audio that appear or change there are imported once (by content) and the pipeline's incremental run is requested."
      />
      <Card>
        <CardHeader>
          <CardTitle>Inbox folders</CardTitle>
          <CardDescription>
            An absolute path on the server, inside SYNTHEX_INBOX_ROOTS (default: the server user&apos;s home and temp folders). A file deleted from the folder is not deleted
            from memory: forget its records in the explorer. Hidden files and partial downloads are never read.
          </CardDescription>
        </CardHeader>
        <CardContent>
          {rows.length === 0 && !inboxes.isLoading ? (
            <EmptyState icon={FolderInput} title="No pipeline sources yet" />
          ) : (
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Pipeline / source</TableHead>
                  <TableHead>Inbox folder</TableHead>
                  <TableHead>Last event</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((row) => {
                  const key = `${row.pipelineId}/${row.source}`;
                  const draft = drafts[key] ?? row.path ?? "";
                  const label = `Inbox folder of ${row.pipelineName} / ${row.source}`;
                  return (
                    <TableRow key={key}>
                      <TableCell className="whitespace-nowrap font-medium">
                        {row.pipelineName} / {row.source}
                      </TableCell>
                      <TableCell>
                        <form
                          className="flex gap-2"
                          onSubmit={(e) => {
                            e.preventDefault();
                            setInbox.mutate({ workspaceId, pipelineId: row.pipelineId, source: row.source, path: draft.trim() || null });
                          }}
                        >
                          <Input aria-label={label} placeholder="/home/me/Inbox" value={draft} onChange={(e) => setDrafts((d) => ({ ...d, [key]: e.target.value }))} />
                          <Button type="submit" size="sm" disabled={setInbox.isPending}>
                            Save
                          </Button>
                          {row.path ? (
                            <Button
                              type="button"
                              size="sm"
                              variant="outline"
                              disabled={setInbox.isPending}
                              onClick={() => setInbox.mutate({ workspaceId, pipelineId: row.pipelineId, source: row.source, path: null })}
                            >
                              Clear
                            </Button>
                          ) : null}
                        </form>
                      </TableCell>
                      <TableCell className="text-sm text-muted-foreground" data-testid={`inbox-event-${row.source}`}>
                        {row.lastEvent ? `${row.lastEvent} (${row.lastEventAt ? new Date(row.lastEventAt).toLocaleTimeString() : ""})` : row.path ? "watching" : "—"}
                      </TableCell>
                    </TableRow>
                  );
                })}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>
    </div>
  );
}
