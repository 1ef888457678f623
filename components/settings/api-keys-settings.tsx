"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { KeyRound } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";

export function ApiKeysSettings() {
  const { workspace } = useWorkspace();
  const canManage = useCan("apiKeys:manage");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [secret, setSecret] = useState<string | null>(null);
  const keys = useQuery({ ...trpc.apiKey.list.queryOptions({ workspaceId: workspace.id }), enabled: canManage });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.apiKey.list.queryKey() });
  const create = useMutation(
    trpc.apiKey.create.mutationOptions({
      onSuccess: (key) => {
        setSecret(key.secret);
        setName("");
        refresh();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const revoke = useMutation(
    trpc.apiKey.revoke.mutationOptions({ onSuccess: refresh, onError: (err) => toast.error(errorMessage(err)) }),
  );
  if (!canManage) {
    return (
      <>
        <PageHeader title="API keys" />
        <EmptyState icon={KeyRound} title="Only owners and admins manage API keys" description="Ask one of them for a key." />
      </>
    );
  }
  return (
    <div className="max-w-3xl space-y-6">
      <PageHeader title="API keys" description="Agents call Synthex with a key: send it as `Authorization: Bearer <key>`." />
      <Card>
        <CardHeader>
          <CardTitle>Create a key</CardTitle>
          <CardDescription>The secret is shown once. Synthex stores only its hash.</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <form
            className="flex gap-2"
            onSubmit={(e) => {
              e.preventDefault();
              create.mutate({ workspaceId: workspace.id, name, role: "editor" });
            }}
          >
            <Input placeholder="Key name, e.g. support-agent" value={name} onChange={(e) => setName(e.target.value)} />
            <Button type="submit" disabled={create.isPending || !name.trim()}>
              Create key
            </Button>
          </form>
          {secret ? (
            <div className="rounded-md border border-warning/50 bg-warning/10 p-3 text-sm">
              <div className="mb-2 font-medium">Copy this key now; it will not be shown again.</div>
              <Input readOnly value={secret} data-testid="api-key-secret" />
            </div>
          ) : null}
        </CardContent>
      </Card>
      <Card>
        <CardContent>
          {keys.data?.length ? (
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Name</TableHead>
                  <TableHead>Key</TableHead>
                  <TableHead>Last used</TableHead>
                  <TableHead />
                </TableRow>
              </TableHeader>
              <TableBody>
                {keys.data.map((k) => (
                  <TableRow key={k.id}>
                    <TableCell>
                      {k.name} <Badge variant="outline">{k.role}</Badge>
                    </TableCell>
                    <TableCell className="font-mono text-xs">{k.prefix}…</TableCell>
                    <TableCell>{k.lastUsedAt ? k.lastUsedAt.toLocaleString() : "never"}</TableCell>
                    <TableCell className="text-right">
                      {k.revokedAt ? (
                        <Badge variant="secondary">revoked</Badge>
                      ) : (
                        <Button variant="ghost" size="sm" onClick={() => revoke.mutate({ workspaceId: workspace.id, keyId: k.id })}>
                          Revoke
                        </Button>
                      )}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          ) : (
            <p className="py-6 text-center text-sm text-muted-foreground">No keys yet.</p>
          )}
        </CardContent>
      </Card>
    </div>
  );
}
