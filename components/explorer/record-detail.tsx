"use client";
import { useQuery } from "@tanstack/react-query";
import { AlertTriangle } from "lucide-react";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { LineageExplorer } from "@/components/lineage/lineage-explorer";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { fmtDate, fmtDuration, fmtInt, fmtUsd } from "@/components/runs/format";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { mentionLabel, mentionsInMetadata } from "@/server/search/relative-dates";
import { recordLabel } from "./api";
import { MediaOriginCard } from "./media-origin";
import { MemoryHistoryCard } from "./memory-history";
import { PurgeRecordButton } from "./purge-record-dialog";

function Row({ k, v }: { k: string; v: React.ReactNode }) {
  return (
    <div className="grid grid-cols-[10rem_1fr] gap-2 border-b py-1.5 text-sm last:border-0">
      <span className="text-muted-foreground">{k}</span>
      <span className="min-w-0 break-all">{v}</span>
    </div>
  );
}

export function RecordDetailPage({ pipelineId, recordId }: { pipelineId: string; recordId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  // Without pipelineId the record is shown even when this branch no longer points at it (old versions).
  const ref = { workspaceId: workspace.id, id: recordId };
  const record = useQuery(trpc.record.get.queryOptions(ref));
  const sources = useQuery(trpc.record.sources.queryOptions(ref));

  if (record.isPending) return <Skeleton className="h-64 w-full" />;
  if (record.isError) {
    return (
      <>
        <PipelineTabs pipelineId={pipelineId} />
        <EmptyState icon={AlertTriangle} title="Record not found" description={errorMessage(record.error)} />
      </>
    );
  }
  const r = record.data;
  const audit = (r.audit ?? {}) as Record<string, unknown>;
  const model = typeof audit.model === "string" ? audit.model : null;
  const offline = model?.startsWith("offline/") ?? false;
  // Relative time resolved at index time ("last night" → the day before the session), when it is this record's own.
  const mentions = mentionsInMetadata(r.metadata, r.contentFingerprint);
  const shared = audit.sharedCall as { index?: unknown; of?: unknown } | undefined;
  const sharedCall = shared && typeof shared.index === "number" && typeof shared.of === "number" ? { index: shared.index, of: shared.of } : null;
  const num = (k: string) => (typeof audit[k] === "number" ? (audit[k] as number) : null);

  return (
    <>
      <PageHeader
        title={`${r.step} · ${recordLabel(r)}`}
        actions={<PurgeRecordButton workspaceId={workspace.id} recordId={r.id} afterPurgeHref={`${base}/explore?branch=${encodeURIComponent(branch)}`} />}
        description={
          <>
            Record <code>{r.id}</code> · {fmtDate(r.createdAt)}{" "}
            {r.onBranch === false ? <Badge variant="warning">not on {branch} (made by an older version)</Badge> : null}
          </>
        }
      />
      <PipelineTabs pipelineId={pipelineId} />
      <MediaOriginCard metadata={r.metadata} recordId={r.id} />
      <div className="grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader>
            <CardTitle>Content</CardTitle>
            {offline ? (
              <CardDescription>
                <Badge variant="outline" data-testid="extractive-label">
                  extractive · offline model
                </Badge>{" "}
                Sentences picked from the sources, not written by a language model; the prompt’s prose is not followed.
              </CardDescription>
            ) : null}
          </CardHeader>
          <CardContent>
            <div className="max-h-[28rem] overflow-auto text-sm whitespace-pre-wrap" data-testid="record-content">
              {r.content}
            </div>
          </CardContent>
        </Card>
        <div className="space-y-6">
          <Card>
            <CardHeader>
              <CardTitle>Metadata</CardTitle>
            </CardHeader>
            <CardContent>
              <Row k="Step" v={r.step} />
              <Row k="Scope" v={r.scope || "—"} />
              <Row k="Sources / used by" v={`${fmtInt(r.sourceCount)} / ${fmtInt(r.childCount)}`} />
              <Row k="Step version" v={<code>{r.stepVersionHash.slice(0, 16)}</code>} />
              <Row k="Fingerprint" v={<code>{r.contentFingerprint.slice(0, 16)}</code>} />
              <Row
                k="Run"
                v={
                  r.runId ? (
                    <Link className="text-primary hover:underline" href={`${base}/runs/${r.runId}?branch=${encodeURIComponent(branch)}`}>
                      {r.runId.slice(-8)}
                    </Link>
                  ) : (
                    "— (imported)"
                  )
                }
              />
              {mentions.length ? <Row k="Dates mentioned" v={<span data-testid="date-mentions">{mentions.map(mentionLabel).join("; ")}</span>} /> : null}
              <Row k="Embeddings" v={r.embeddings.map((e) => `${e.model} (${e.dimensions}d)`).join(", ") || "—"} />
              <details className="mt-2 text-xs">
                <summary className="cursor-pointer text-muted-foreground">All metadata (JSON)</summary>
                <pre className="mt-1 max-h-64 overflow-auto rounded bg-muted p-2">{JSON.stringify(r.metadata, null, 2)}</pre>
              </details>
            </CardContent>
          </Card>
          <Card>
            <CardHeader>
              <CardTitle>Audit</CardTitle>
              <CardDescription>How this record was made.</CardDescription>
            </CardHeader>
            <CardContent>
              {!r.audit ? (
                <p className="text-sm text-muted-foreground">No audit: this is a source record (imported, not computed).</p>
              ) : (
                <>
                  {model ? <Row k="Model" v={<>{model} {offline ? <Badge variant="outline">extractive</Badge> : null}</>} /> : null}
                  {typeof audit.operator === "string" ? <Row k="Operator" v={`${audit.operator} (built-in, no model)`} /> : null}
                  {num("temperature") != null ? <Row k="Temperature" v={num("temperature")} /> : null}
                  {num("tokensIn") != null ? <Row k="Tokens in / out" v={`${fmtInt(num("tokensIn"))} / ${fmtInt(num("tokensOut"))}`} /> : null}
                  {num("costUsd") != null ? <Row k="Cost" v={fmtUsd(num("costUsd"))} /> : null}
                  {num("latencyMs") != null ? <Row k="Latency" v={fmtDuration(num("latencyMs"))} /> : null}
                  {audit.replayed ? <Row k="Replayed" v="yes (stored response reused, free)" /> : null}
                  {typeof audit.renderedPromptHash === "string" ? <Row k="Rendered prompt hash" v={<code>{String(audit.renderedPromptHash).slice(0, 16)}</code>} /> : null}
                  {sharedCall ? (
                    <Row
                      k="Model call"
                      v={`one call made ${sharedCall.of} records; this is item ${sharedCall.index + 1} (its tokens, cost, prompt and response are the call's, counted once)`}
                    />
                  ) : null}
                  {typeof audit.responseItem === "string" ? <Row k="Its part of the response" v={<code className="break-all">{audit.responseItem}</code>} /> : null}
                  {typeof audit.renderedPrompt === "string" ? (
                    <details className="mt-2 text-xs" open>
                      <summary className="cursor-pointer text-muted-foreground">Rendered prompt (the template filled with this record&apos;s inputs, as sent to the model)</summary>
                      <pre data-testid="rendered-prompt" className="mt-1 max-h-64 overflow-auto rounded bg-muted p-2 whitespace-pre-wrap">
                        {audit.renderedPrompt}
                      </pre>
                    </details>
                  ) : typeof audit.renderedPromptHash === "string" ? (
                    <p className="mt-2 text-xs text-muted-foreground" data-testid="rendered-prompt-missing">
                      Made before Synthex kept the rendered prompt: only its hash was stored. Re-run the step to see the prompt text.
                    </p>
                  ) : null}
                  {typeof audit.rawResponse === "string" ? (
                    <details className="mt-2 text-xs" data-testid="raw-response">
                      <summary className="cursor-pointer text-muted-foreground">Raw response</summary>
                      <pre className="mt-1 max-h-64 overflow-auto rounded bg-muted p-2 whitespace-pre-wrap">{audit.rawResponse}</pre>
                    </details>
                  ) : null}
                </>
              )}
            </CardContent>
          </Card>
        </div>
      </div>

      {r.metadata.memory ? <MemoryHistoryCard workspaceId={workspace.id} recordId={r.id} branch={branch} base={base} /> : null}

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Lineage</CardTitle>
          <CardDescription>Where this record came from and what was made from it, grouped by step with counts. Click to expand.</CardDescription>
        </CardHeader>
        <CardContent>
          <LineageExplorer
            key={r.id}
            pipelineId={pipelineId}
            branch={branch}
            recordId={r.id}
            hrefFor={(id) => `${base}/records/${id}?branch=${encodeURIComponent(branch)}`}
          />
        </CardContent>
      </Card>

      {sources.data && sources.data.length ? (
        <Card className="mt-6">
          <CardHeader>
            <CardTitle>Direct sources ({sources.data.length})</CardTitle>
          </CardHeader>
          <CardContent className="space-y-1">
            {sources.data.map((s) => (
              <Link key={s.id} href={`${base}/records/${s.id}?branch=${encodeURIComponent(branch)}`} className="block truncate rounded px-2 py-1 text-sm hover:bg-muted">
                <Badge variant="secondary" className="mr-2">
                  {s.step}
                </Badge>
                {recordLabel(s)} — <span className="text-muted-foreground">{s.content.slice(0, 140)}</span>
              </Link>
            ))}
          </CardContent>
        </Card>
      ) : null}
    </>
  );
}
