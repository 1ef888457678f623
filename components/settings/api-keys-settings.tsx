"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Copy, KeyRound } from "lucide-react";
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
  const [readOnly, setReadOnly] = useState(false);
  const [pipelines, setPipelines] = useState<string[]>([]);
  const [scopePrefix, setScopePrefix] = useState("");
  const pipelineList = useQuery({ ...trpc.pipeline.list.queryOptions({ workspaceId: workspace.id }), enabled: canManage });
  const [secret, setSecret] = useState<string | null>(null);
  const keys = useQuery({ ...trpc.apiKey.list.queryOptions({ workspaceId: workspace.id }), enabled: canManage });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.apiKey.list.queryKey() });
  const create = useMutation(
    trpc.apiKey.create.mutationOptions({
      onSuccess: (key) => {
        setSecret(key.secret);
        setName("");
        setReadOnly(false);
        setPipelines([]);
        setScopePrefix("");
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
      <PageHeader
        title="API keys"
        description="Agents call Synthex with a key: send it as `Authorization: Bearer <key>`. A key belongs to the member who made it: it acts with at most their current role, and stops working when they leave the workspace."
      />
      <Card>
        <CardHeader>
          <CardTitle>Create a key</CardTitle>
          <CardDescription>The secret is shown once. Synthex stores only its hash.</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <form
            className="space-y-3"
            onSubmit={(e) => {
              e.preventDefault();
              create.mutate({ workspaceId: workspace.id, name, role: "editor", readOnly, pipelines, scopePrefix: scopePrefix.trim() || undefined });
            }}
          >
            <div className="flex gap-2">
              <Input placeholder="Key name, e.g. support-agent" value={name} onChange={(e) => setName(e.target.value)} />
              <Button type="submit" disabled={create.isPending || !name.trim()}>
                Create key
              </Button>
            </div>
            <fieldset className="space-y-2 text-sm">
              <legend className="mb-1 text-muted-foreground">Restrictions (optional)</legend>
              <label className="flex items-center gap-2">
                <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />
                Read-only (search, ask, read records; no ingest, runs or other writes)
              </label>
              <label className="flex items-center gap-2">
                <span className="w-28 shrink-0">Scope prefix</span>
                <Input placeholder="e.g. acme:eng (reaches acme:eng and acme:eng:*, never acme:sales)" value={scopePrefix} onChange={(e) => setScopePrefix(e.target.value)} />
              </label>
              {pipelineList.data?.length ? (
                <div className="flex flex-wrap items-center gap-3">
                  <span className="w-28 shrink-0">Pipelines</span>
                  {pipelineList.data.map((p) => (
                    <label key={p.id} className="flex items-center gap-1">
                      <input
                        type="checkbox"
                        aria-label={`Only pipeline ${p.name}`}
                        checked={pipelines.includes(p.name)}
                        onChange={(e) => setPipelines((list) => (e.target.checked ? [...list, p.name] : list.filter((n) => n !== p.name)))}
                      />
                      {p.name}
                    </label>
                  ))}
                  <span className="text-xs text-muted-foreground">none checked: every pipeline</span>
                </div>
              ) : null}
            </fieldset>
          </form>
          {secret ? (
            <div className="rounded-md border border-warning/50 bg-warning/10 p-3 text-sm">
              <div className="mb-2 font-medium">Copy this key now; it will not be shown again.</div>
              <div className="flex gap-2">
                <Input readOnly value={secret} data-testid="api-key-secret" onFocus={(e) => e.currentTarget.select()} />
                <Button
                  type="button"
                  variant="outline"
                  data-testid="copy-api-key"
                  onClick={() =>
                    navigator.clipboard
                      ?.writeText(secret)
                      .then(() => toast.success("API key copied"))
                      .catch(() => toast.error("Could not copy: select the key and copy it by hand"))
                  }
                >
                  <Copy /> Copy
                </Button>
              </div>
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
                  <TableHead>Key</TableHead>
                  <TableHead>Created by</TableHead>
                  <TableHead>Restrictions</TableHead>
                  <TableHead>Last used</TableHead>
                  <TableHead />
                </TableRow>
              </TableHeader>
              <TableBody>
                {keys.data.map((k) => (
                  <TableRow key={k.id}>
                    <TableCell>
                      <div>
                        {k.name} <Badge variant="outline">{k.role}</Badge>
                      </div>
                      <div className="font-mono text-xs text-muted-foreground">{k.prefix}…</div>
                      {k.status === "active" && k.effectiveRole !== k.role ? (
                        <div className="text-xs text-warning-foreground" data-testid={`key-capped-${k.name}`}>
                          acts as {k.effectiveRole} (its creator&apos;s role)
                        </div>
                      ) : null}
                    </TableCell>
                    <TableCell data-testid={`key-creator-${k.name}`}>
                      {k.createdBy ? (
                        <>
                          <div>{k.createdBy.name ?? k.createdBy.email}</div>
                          {k.createdBy.name ? <div className="text-xs text-muted-foreground">{k.createdBy.email}</div> : null}
                        </>
                      ) : (
                        <span className="text-xs text-muted-foreground">unknown</span>
                      )}
                    </TableCell>
                    <TableCell className="whitespace-normal" data-testid={`key-restrictions-${k.name}`}>
                      <div className="flex flex-wrap gap-1">
                        {k.readOnly ? <Badge variant="secondary">read-only</Badge> : null}
                        {k.scopePrefix ? <Badge variant="secondary">scope {k.scopePrefix}</Badge> : null}
                        {k.pipelines.map((p) => (
                          <Badge key={p} variant="secondary">
                            pipeline {p}
                          </Badge>
                        ))}
                        {!k.readOnly && !k.scopePrefix && !k.pipelines.length ? <span className="text-xs text-muted-foreground">none</span> : null}
                      </div>
                    </TableCell>
                    <TableCell className="text-xs" title={k.lastUsedAt?.toLocaleString()}>
                      {k.lastUsedAt ? k.lastUsedAt.toLocaleDateString() : "never"}
                    </TableCell>
                    <TableCell className="text-right">
                      {k.status === "revoked" ? (
                        <Badge variant="secondary">revoked</Badge>
                      ) : k.status === "inactive" ? (
                        <Badge variant="secondary" title="Its creator is no longer a member of this workspace.">
                          creator left
                        </Badge>
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
