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
  const settings = useQuery({ ...trpc.source.inboxSettings.queryOptions({ workspaceId }), enabled: canManage });
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
  const enabled = settings.data?.enabled ?? true;
  const folder = settings.data?.folder ?? null;
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
            A folder inside this workspace&apos;s inbox folder on the server: give its name (e.g. <code>support-exports</code>) or an absolute path below it. A file deleted
            from the folder is not deleted from memory: forget its records in the explorer. Hidden files, partial downloads and symbolic links are never read.
          </CardDescription>
        </CardHeader>
        <CardContent className="space-y-4">
          {settings.data && !enabled ? (
            <div role="status" data-testid="inbox-off" className="rounded-md border border-amber-500/40 bg-amber-500/10 p-3 text-sm">
              Inbox folders are off on this server. The operator turns them on by setting <code>SYNTHEX_INBOX_ROOTS</code> to one or more absolute folders and restarting
              the server; each workspace then gets its own folder inside each of them, and only that folder can be an inbox.
            </div>
          ) : null}
          {folder ? (
            <p className="text-sm" data-testid="inbox-workspace-folder">
              This workspace&apos;s inbox folder: <code className="break-all">{folder}</code>. Make folders inside it and drop files there; nothing outside it can be an inbox.
            </p>
          ) : null}
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
                          <Input
                            aria-label={label}
                            placeholder="support-exports"
                            disabled={!enabled && !row.path}
                            value={draft}
                            onChange={(e) => setDrafts((d) => ({ ...d, [key]: e.target.value }))}
                          />
                          <Button type="submit" size="sm" disabled={setInbox.isPending || !enabled}>
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
                        {row.problem ? (
                          <span className="text-destructive" role="alert">
                            Not watched: {row.problem}
                          </span>
                        ) : row.lastEvent ? (
                          `${row.lastEvent} (${row.lastEventAt ? new Date(row.lastEventAt).toLocaleTimeString() : ""})`
                        ) : row.path ? (
                          "watching"
                        ) : (
                          "—"
                        )}
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
