"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Cpu } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Select, SelectContent, SelectItem, SelectTrigger, SelectValue } from "@/components/ui/select";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";

type Kind = "openai" | "anthropic" | "openai-compatible";

interface ProviderForm {
  name: string;
  kind: Kind;
  baseUrl: string;
  apiKey: string;
  maxConcurrency: string;
  requestsPerMinute: string;
  timeoutSeconds: string;
  /** Editing an existing provider (its key is kept unless a new one is typed). */
  editing: boolean;
  hasKey: boolean;
}

const EMPTY_FORM: ProviderForm = {
  name: "",
  kind: "openai",
  baseUrl: "",
  apiKey: "",
  maxConcurrency: "8",
  requestsPerMinute: "",
  timeoutSeconds: "60",
  editing: false,
  hasKey: false,
};

const KIND_LABEL: Record<Kind, string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  "openai-compatible": "OpenAI-compatible (Ollama, vLLM, LM Studio, OpenRouter…)",
};

function usd(n: number) {
  return n === 0 ? "$0" : `$${n < 0.01 ? n.toFixed(3) : n.toFixed(2)}`;
}

export function ModelsSettings() {
  const { workspace } = useWorkspace();
  const canManage = useCan("providers:manage");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const workspaceId = workspace.id;
  const [form, setForm] = useState<ProviderForm>(EMPTY_FORM);
  const [testModel, setTestModel] = useState("");
  const [filter, setFilter] = useState("");
  const [drafts, setDrafts] = useState<Record<string, { input: string; output: string }>>({});
  const [newPrice, setNewPrice] = useState({ model: "", input: "", output: "" });

  const providers = useQuery(trpc.provider.list.queryOptions({ workspaceId }));
  const prices = useQuery(trpc.provider.prices.queryOptions({ workspaceId }));
  const refreshProviders = () => queryClient.invalidateQueries({ queryKey: trpc.provider.list.queryKey() });
  const refreshPrices = () => queryClient.invalidateQueries({ queryKey: trpc.provider.prices.queryKey() });
  const onError = (err: unknown) => toast.error(errorMessage(err));

  const upsert = useMutation(
    trpc.provider.upsert.mutationOptions({
      onSuccess: (p) => {
        toast.success(`Saved provider "${p.name}".`);
        setForm(EMPTY_FORM);
        refreshProviders();
      },
      onError,
    }),
  );
  const remove = useMutation(trpc.provider.delete.mutationOptions({ onSuccess: refreshProviders, onError }));
  const test = useMutation(
    trpc.provider.testConnection.mutationOptions({
      onSuccess: (r) => (r.ok ? toast.success(`${r.model}: ${r.message} (${r.latencyMs} ms)`) : toast.error(`${r.model}: ${r.message}`)),
      onError,
    }),
  );
  const setPrice = useMutation(
    trpc.provider.setPrice.mutationOptions({
      onSuccess: (row) => {
        setDrafts((d) => {
          const next = { ...d };
          delete next[row.model];
          return next;
        });
        setNewPrice({ model: "", input: "", output: "" });
        refreshPrices();
      },
      onError,
    }),
  );
  const resetPrice = useMutation(trpc.provider.resetPrice.mutationOptions({ onSuccess: refreshPrices, onError }));

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const key = form.apiKey.trim();
    upsert.mutate({
      workspaceId,
      name: form.name.trim(),
      kind: form.kind,
      baseUrl: form.baseUrl.trim() || null,
      // Write-only: an empty field keeps the saved key.
      ...(key ? { apiKey: key } : {}),
      maxConcurrency: Number(form.maxConcurrency) || 8,
      requestsPerMinute: form.requestsPerMinute.trim() ? Number(form.requestsPerMinute) : null,
      timeoutMs: Math.round((Number(form.timeoutSeconds) || 60) * 1000),
    });
  };

  const visiblePrices = (prices.data ?? []).filter((p) => !filter.trim() || p.model.toLowerCase().includes(filter.trim().toLowerCase()));

  return (
    <div className="max-w-4xl space-y-6">
      <PageHeader
        title="Models"
        description="Providers your pipelines call, and the prices plans use to estimate cost. Steps name a model as provider/model, e.g. openai/gpt-4o-mini."
      />

      <Card>
        <CardHeader>
          <CardTitle>Providers</CardTitle>
          <CardDescription>
            API keys are encrypted at rest and never shown again after saving. The CLI can also use OPENAI_API_KEY, OPENAI_BASE_URL and ANTHROPIC_API_KEY.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Name (model prefix)</TableHead>
                <TableHead>Kind</TableHead>
                <TableHead>Key</TableHead>
                <TableHead>Limits</TableHead>
                <TableHead />
              </TableRow>
            </TableHeader>
            <TableBody>
              <TableRow>
                <TableCell className="font-mono text-xs">offline</TableCell>
                <TableCell>
                  Built in <Badge variant="outline">extractive</Badge>
                </TableCell>
                <TableCell className="text-muted-foreground">none needed</TableCell>
                <TableCell className="text-xs text-muted-foreground">no network, free</TableCell>
                <TableCell className="max-w-56 text-xs text-muted-foreground">
                  offline/extractive selects sentences from the inputs; it does not follow the prompt.
                </TableCell>
              </TableRow>
              {(providers.data ?? []).map((p) => (
                <TableRow key={p.id} data-testid={`provider-${p.name}`}>
                  <TableCell className="font-mono text-xs">{p.name}</TableCell>
                  <TableCell>
                    {p.kind}
                    {p.baseUrl ? <div className="max-w-48 truncate text-xs text-muted-foreground">{p.baseUrl}</div> : null}
                  </TableCell>
                  <TableCell className="font-mono text-xs">{p.hasKey ? p.keyPreview : <span className="text-muted-foreground">no key</span>}</TableCell>
                  <TableCell className="text-xs">
                    {p.maxConcurrency} concurrent
                    {p.requestsPerMinute ? `, ${p.requestsPerMinute}/min` : ""}, {Math.round(p.timeoutMs / 1000)} s timeout
                  </TableCell>
                  <TableCell className="space-x-1 text-right whitespace-nowrap">
                    {canManage ? (
                      <>
                        <Button variant="ghost" size="sm" disabled={test.isPending} onClick={() => test.mutate({ workspaceId, name: p.name, model: testModel || undefined })}>
                          Test
                        </Button>
                        <Button
                          variant="ghost"
                          size="sm"
                          onClick={() =>
                            setForm({
                              name: p.name,
                              kind: p.kind as Kind,
                              baseUrl: p.baseUrl ?? "",
                              apiKey: "",
                              maxConcurrency: String(p.maxConcurrency),
                              requestsPerMinute: p.requestsPerMinute ? String(p.requestsPerMinute) : "",
                              timeoutSeconds: String(Math.round(p.timeoutMs / 1000)),
                              editing: true,
                              hasKey: p.hasKey,
                            })
                          }
                        >
                          Edit
                        </Button>
                        <Button
                          variant="ghost"
                          size="sm"
                          onClick={() => {
                            if (confirm(`Delete provider "${p.name}"? Steps using ${p.name}/… will fail until it is added again.`)) remove.mutate({ workspaceId, name: p.name });
                          }}
                        >
                          Delete
                        </Button>
                      </>
                    ) : null}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
          {providers.data && providers.data.length === 0 ? (
            <p className="pt-4 text-sm text-muted-foreground">
              No providers yet: pipelines use the offline model. Add OpenAI, Anthropic or any OpenAI-compatible server below.
            </p>
          ) : null}
          {canManage && providers.data?.length ? (
            <div className="flex items-center gap-2 pt-4 text-sm">
              <Label htmlFor="test-model">Model for “Test”</Label>
              <Input id="test-model" className="max-w-60" placeholder="default per provider" value={testModel} onChange={(e) => setTestModel(e.target.value)} />
            </div>
          ) : null}
        </CardContent>
      </Card>

      {canManage ? (
        <Card>
          <CardHeader>
            <CardTitle>{form.editing ? `Edit provider "${form.name}"` : "Add a provider"}</CardTitle>
            <CardDescription>The name is the prefix steps use: a provider named openrouter serves openrouter/meta-llama/llama-3.1-8b-instruct.</CardDescription>
          </CardHeader>
          <CardContent>
            <form className="grid grid-cols-2 gap-4" onSubmit={submit} autoComplete="off">
              <div className="space-y-1.5">
                <Label htmlFor="provider-name">Name</Label>
                <Input id="provider-name" value={form.name} disabled={form.editing} placeholder="openai" onChange={(e) => setForm({ ...form, name: e.target.value })} />
              </div>
              <div className="space-y-1.5">
                <Label>Kind</Label>
                <Select value={form.kind} onValueChange={(v) => setForm({ ...form, kind: v as Kind })}>
                  <SelectTrigger className="w-full">
                    <SelectValue />
                  </SelectTrigger>
                  <SelectContent>
                    {(Object.keys(KIND_LABEL) as Kind[]).map((k) => (
                      <SelectItem key={k} value={k}>
                        {KIND_LABEL[k]}
                      </SelectItem>
                    ))}
                  </SelectContent>
                </Select>
              </div>
              <div className="col-span-2 space-y-1.5">
                <Label htmlFor="provider-base-url">Base URL {form.kind === "openai-compatible" ? "" : "(optional)"}</Label>
                <Input
                  id="provider-base-url"
                  value={form.baseUrl}
                  placeholder={form.kind === "openai-compatible" ? "https://llm.example.com/v1" : "default endpoint"}
                  onChange={(e) => setForm({ ...form, baseUrl: e.target.value })}
                />
                <p className="text-xs text-muted-foreground">
                  https and public addresses only; a local server (e.g. Ollama) needs SYNTHEX_ALLOW_HTTP_HOSTS and SYNTHEX_ALLOW_PRIVATE_NETWORKS on the server.
                </p>
              </div>
              <div className="col-span-2 space-y-1.5">
                <Label htmlFor="provider-key">API key</Label>
                <Input
                  id="provider-key"
                  type="password"
                  autoComplete="new-password"
                  value={form.apiKey}
                  placeholder={form.editing && form.hasKey ? "saved — leave empty to keep it (not if the URL or kind changes)" : "sk-…"}
                  onChange={(e) => setForm({ ...form, apiKey: e.target.value })}
                  data-testid="provider-key-input"
                />
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="provider-concurrency">Max concurrent requests</Label>
                <Input id="provider-concurrency" type="number" min={1} value={form.maxConcurrency} onChange={(e) => setForm({ ...form, maxConcurrency: e.target.value })} />
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="provider-rpm">Requests per minute (optional)</Label>
                <Input id="provider-rpm" type="number" min={1} value={form.requestsPerMinute} onChange={(e) => setForm({ ...form, requestsPerMinute: e.target.value })} />
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="provider-timeout">Timeout (seconds)</Label>
                <Input id="provider-timeout" type="number" min={1} value={form.timeoutSeconds} onChange={(e) => setForm({ ...form, timeoutSeconds: e.target.value })} />
              </div>
              <div className="col-span-2 flex gap-2">
                <Button type="submit" disabled={upsert.isPending || !form.name.trim()}>
                  {form.editing ? "Save changes" : "Add provider"}
                </Button>
                {form.editing ? (
                  <>
                    {form.hasKey ? (
                      <Button
                        type="button"
                        variant="outline"
                        onClick={() =>
                          upsert.mutate({
                            workspaceId,
                            name: form.name,
                            kind: form.kind,
                            baseUrl: form.baseUrl.trim() || null,
                            apiKey: "",
                            maxConcurrency: Number(form.maxConcurrency) || 8,
                            requestsPerMinute: form.requestsPerMinute.trim() ? Number(form.requestsPerMinute) : null,
                            timeoutMs: Math.round((Number(form.timeoutSeconds) || 60) * 1000),
                          })
                        }
                      >
                        Remove saved key
                      </Button>
                    ) : null}
                    <Button type="button" variant="ghost" onClick={() => setForm(EMPTY_FORM)}>
                      Cancel
                    </Button>
                  </>
                ) : null}
              </div>
            </form>
          </CardContent>
        </Card>
      ) : null}

      <Card>
        <CardHeader>
          <CardTitle>Pricing</CardTitle>
          <CardDescription>USD per million tokens. Plans estimate cost with these prices; edit a row to override it for this workspace.</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <Input placeholder="Filter models…" value={filter} onChange={(e) => setFilter(e.target.value)} className="max-w-xs" />
          {prices.data ? (
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Model</TableHead>
                  <TableHead>Input / 1M</TableHead>
                  <TableHead>Output / 1M</TableHead>
                  <TableHead />
                </TableRow>
              </TableHeader>
              <TableBody>
                {visiblePrices.map((p) => {
                  const draft = drafts[p.model];
                  return (
                    <TableRow key={p.model}>
                      <TableCell className="font-mono text-xs">
                        {p.model} {p.source === "override" ? <Badge variant="secondary">override</Badge> : null}
                      </TableCell>
                      {canManage ? (
                        <>
                          <TableCell>
                            <Input
                              className="h-8 w-24"
                              type="number"
                              step="any"
                              min={0}
                              aria-label={`${p.model} input price`}
                              value={draft?.input ?? String(p.inputPerMillion)}
                              onChange={(e) => setDrafts({ ...drafts, [p.model]: { input: e.target.value, output: draft?.output ?? String(p.outputPerMillion) } })}
                            />
                          </TableCell>
                          <TableCell>
                            <Input
                              className="h-8 w-24"
                              type="number"
                              step="any"
                              min={0}
                              aria-label={`${p.model} output price`}
                              value={draft?.output ?? String(p.outputPerMillion)}
                              onChange={(e) => setDrafts({ ...drafts, [p.model]: { input: draft?.input ?? String(p.inputPerMillion), output: e.target.value } })}
                            />
                          </TableCell>
                          <TableCell className="space-x-1 text-right whitespace-nowrap">
                            {draft ? (
                              <Button
                                size="sm"
                                onClick={() => setPrice.mutate({ workspaceId, model: p.model, inputPerMillion: Number(draft.input) || 0, outputPerMillion: Number(draft.output) || 0 })}
                              >
                                Save
                              </Button>
                            ) : null}
                            {p.source === "override" ? (
                              <Button variant="ghost" size="sm" onClick={() => resetPrice.mutate({ workspaceId, model: p.model })}>
                                Reset{p.builtin ? ` (${usd(p.builtin.inputPerMillion)} / ${usd(p.builtin.outputPerMillion)})` : ""}
                              </Button>
                            ) : null}
                          </TableCell>
                        </>
                      ) : (
                        <>
                          <TableCell>{usd(p.inputPerMillion)}</TableCell>
                          <TableCell>{usd(p.outputPerMillion)}</TableCell>
                          <TableCell />
                        </>
                      )}
                    </TableRow>
                  );
                })}
              </TableBody>
            </Table>
          ) : (
            <EmptyState icon={Cpu} title="Loading prices…" description="" />
          )}
          {canManage ? (
            <form
              className="flex flex-wrap items-end gap-2 pt-2"
              onSubmit={(e) => {
                e.preventDefault();
                setPrice.mutate({ workspaceId, model: newPrice.model.trim(), inputPerMillion: Number(newPrice.input) || 0, outputPerMillion: Number(newPrice.output) || 0 });
              }}
            >
              <div className="space-y-1.5">
                <Label htmlFor="price-model">Price another model</Label>
                <Input id="price-model" placeholder="openrouter/qwen/qwen-2.5-72b-instruct" className="w-72" value={newPrice.model} onChange={(e) => setNewPrice({ ...newPrice, model: e.target.value })} />
              </div>
              <Input aria-label="Input price per million" placeholder="input $/1M" type="number" step="any" min={0} className="w-28" value={newPrice.input} onChange={(e) => setNewPrice({ ...newPrice, input: e.target.value })} />
              <Input aria-label="Output price per million" placeholder="output $/1M" type="number" step="any" min={0} className="w-28" value={newPrice.output} onChange={(e) => setNewPrice({ ...newPrice, output: e.target.value })} />
              <Button type="submit" variant="outline" disabled={!newPrice.model.trim() || setPrice.isPending}>
                Add price
              </Button>
            </form>
          ) : null}
        </CardContent>
      </Card>
    </div>
  );
}
