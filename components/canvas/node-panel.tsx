"use client";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Textarea } from "@/components/ui/textarea";
import { formatPath, type Problem } from "@/server/pipeline/spec";
import {
  CONSOLIDATE_MODES,
  LLM_STEP_TYPES,
  OPERATOR_KINDS_BY_TYPE,
  SOURCE_FORMATS,
  SURFACES,
} from "@/server/pipeline/rules";
import { DEFAULT_TEMPLATES } from "@/server/pipeline/prompts";
import { fromNames, takesList, type DraftNode, type NodeKind } from "./spec-graph";
import { TemplateEditor } from "./template-editor";

import { Field, NativeSelect, numText, str, toNum, type Patch } from "./field";
import { AggregateFields, EntitiesFields, InsightsFields, MergeFields, OperatorFields, RelationsFields } from "./step-fields";

export interface NodePanelProps {
  kind: NodeKind;
  node: DraftNode;
  problems: Problem[];
  /** Names of sources and steps (candidates for `from`). */
  inputs: string[];
  modelSuggestions: string[];
  readOnly: boolean;
  sample: string;
  onSampleChange: (v: string) => void;
  onPatch: (patch: Patch, coalesceKey?: string) => void;
  /** Commit a new name (blur / Enter); returns an error when the rename is refused. */
  onRename: (name: string) => string | null;
  onDelete: () => void;
}

/**
 * The name is edited locally and applied on commit (blur or Enter; Escape reverts): a name typed
 * halfway never matches another node's, so readers are rewritten once, to the final name.
 */
function NameField({ name, readOnly, problem, onRename }: { name: string; readOnly: boolean; problem?: string; onRename: (name: string) => string | null }) {
  const [draft, setDraft] = useState(name);
  const [seen, setSeen] = useState(name);
  const [error, setError] = useState<string | null>(null);
  if (seen !== name) {
    // Undo/redo or another edit changed the name: show it.
    setSeen(name);
    setDraft(name);
    setError(null);
  }
  const commit = () => {
    if (draft === name) return setError(null);
    const refused = onRename(draft);
    setError(refused);
  };
  return (
    <Field label="Name" htmlFor="node-name" problem={error ?? problem} hint="Lowercase slug; applied on Enter or when you leave the field, and every step that reads it follows.">
      <Input
        id="node-name"
        data-testid="node-name"
        className="h-8"
        value={draft}
        disabled={readOnly}
        aria-invalid={error ? true : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            commit();
          } else if (e.key === "Escape") {
            setDraft(name);
            setError(null);
          }
        }}
      />
    </Field>
  );
}

export function NodePanel({ kind, node, problems, inputs, modelSuggestions, readOnly, sample, onSampleChange, onPatch, onRename, onDelete }: NodePanelProps) {
  const type = kind === "step" ? str(node.type) : kind === "source" ? str(node.format) : str(node.surface);
  const problemAt = (...path: (string | number)[]) => {
    const hit = problems.find((p) => path.every((seg, i) => p.path[2 + i] === seg));
    return hit?.message;
  };
  const set = (key: string) => (value: unknown) => onPatch({ [key]: value }, key);
  const hasOperator = typeof node.operator === "object" && node.operator !== null;
  const operator = (node.operator ?? {}) as Record<string, unknown>;
  const operatorKinds = kind === "step" ? (OPERATOR_KINDS_BY_TYPE as Record<string, readonly string[]>)[type] : undefined;
  const isLlm = kind === "step" && (LLM_STEP_TYPES as readonly string[]).includes(type);
  // Entities run offline unless given a prompt; the other model steps always have one (or an operator).
  const usesPrompt = isLlm && !hasOperator && (type !== "entities" || typeof node.prompt === "string");
  const listInput = takesList(kind, node);
  const others = problems.filter((p) => !["name", "description"].includes(String(p.path[2])));

  return (
    <div data-testid="node-panel" className="space-y-4">
      <div className="flex items-center gap-2">
        <Badge variant="outline" className="uppercase">
          {kind}
        </Badge>
        <Badge variant="secondary">{type || "?"}</Badge>
        <Button size="sm" variant="ghost" className="ml-auto text-destructive" onClick={onDelete} disabled={readOnly} title="Delete (Del)">
          Delete
        </Button>
      </div>

      <NameField name={str(node.name)} readOnly={readOnly} problem={problemAt("name")} onRename={onRename} />
      <Field label="Description" htmlFor="node-description" problem={problemAt("description")}>
        <Textarea id="node-description" className="min-h-12 text-sm" value={str(node.description)} disabled={readOnly} onChange={(e) => set("description")(e.target.value || undefined)} />
      </Field>

      {kind === "source" ? (
        <>
          <Field label="Format" htmlFor="node-format" problem={problemAt("format")}>
            <NativeSelect id="node-format" value={str(node.format)} options={SOURCE_FORMATS} disabled={readOnly} onChange={(v) => onPatch({ format: v })} />
          </Field>
          <Field label="Scope" htmlFor="node-scope" problem={problemAt("scope")} hint='e.g. "acme:eng:alice"; derived records inherit it.'>
            <Input id="node-scope" className="h-8" value={str(node.scope)} disabled={readOnly} onChange={(e) => set("scope")(e.target.value || undefined)} />
          </Field>
        </>
      ) : (
        <Field
          label={listInput ? "Inputs (from)" : "Input (from)"}
          htmlFor="node-from"
          problem={problemAt("from")}
          hint="Drag from a node's bottom handle to connect; select an edge and press Delete to disconnect."
        >
          {kind === "step" && !listInput ? (
            <NativeSelect
              id="node-from"
              testId="node-from"
              value={str(node.from)}
              disabled={readOnly}
              options={[{ value: "", label: "— not connected —" }, ...inputs.filter((n) => n !== node.name).map((n) => ({ value: n, label: n }))]}
              onChange={(v) => onPatch({ from: v || undefined })}
            />
          ) : (
            <div className="flex flex-wrap gap-1">
              {fromNames(node).length ? fromNames(node).map((f) => <Badge key={f} variant="outline">{f}</Badge>) : <span className="text-xs text-muted-foreground">not connected</span>}
            </div>
          )}
        </Field>
      )}

      {kind === "step" && type === "aggregate" ? (
        <AggregateFields node={node} readOnly={readOnly} onPatch={onPatch} problem={problemAt("groupBy")} />
      ) : null}

      {kind === "step" && type === "fold" ? (
        <div className="grid grid-cols-2 gap-2">
          <div className="col-span-2">
            <Field label="Order key" htmlFor="node-orderKey" problem={problemAt("orderKey")} hint="metadata path, default time.created_at">
              <Input id="node-orderKey" className="h-8" value={str(node.orderKey)} placeholder="time.created_at" disabled={readOnly} onChange={(e) => set("orderKey")(e.target.value || undefined)} />
            </Field>
          </div>
          <Field label="Checkpoint every" htmlFor="node-checkpointEvery" problem={problemAt("checkpointEvery")}>
            <Input id="node-checkpointEvery" className="h-8" inputMode="numeric" placeholder="6" value={numText(node.checkpointEvery)} disabled={readOnly} onChange={(e) => set("checkpointEvery")(toNum(e.target.value))} />
          </Field>
          <Field label="Max state tokens" htmlFor="node-maxStateTokens" problem={problemAt("maxStateTokens")}>
            <Input id="node-maxStateTokens" className="h-8" inputMode="numeric" placeholder="8000" value={numText(node.maxStateTokens)} disabled={readOnly} onChange={(e) => set("maxStateTokens")(toNum(e.target.value))} />
          </Field>
        </div>
      ) : null}

      {kind === "step" && type === "merge" ? <MergeFields node={node} readOnly={readOnly} onPatch={onPatch} problemAt={problemAt} /> : null}

      {kind === "step" && type === "consolidate" ? (
        <div className="grid grid-cols-2 gap-2">
          <Field label="Similarity threshold" htmlFor="node-threshold" problem={problemAt("threshold")} hint="0..1, default 0.85: at least this similar = the same memory">
            <Input id="node-threshold" className="h-8" placeholder="0.85" value={numText(node.threshold)} disabled={readOnly} onChange={(e) => set("threshold")(toNum(e.target.value))} />
          </Field>
          <Field label="Decisions" htmlFor="node-consolidate-mode" problem={problemAt("mode")} hint="full: ADD/UPDATE/DELETE/NONE; add-only: ADD or NONE">
            <NativeSelect id="node-consolidate-mode" testId="node-consolidate-mode" value={str(node.mode) || "full"} options={CONSOLIDATE_MODES} disabled={readOnly} onChange={(v) => onPatch({ mode: v })} />
          </Field>
        </div>
      ) : null}

      {kind === "step" && type === "entities" ? <EntitiesFields node={node} readOnly={readOnly} onPatch={onPatch} problemAt={problemAt} /> : null}
      {kind === "step" && type === "relations" ? <RelationsFields node={node} readOnly={readOnly} onPatch={onPatch} problemAt={problemAt} /> : null}
      {kind === "step" && type === "insights" ? <InsightsFields node={node} readOnly={readOnly} onPatch={onPatch} problemAt={problemAt} /> : null}

      {operatorKinds ? (
        <Field label="Runs with" htmlFor="node-mode" problem={problemAt("operator") ?? problemAt("prompt")}>
          <NativeSelect
            id="node-mode"
            testId="node-mode"
            value={hasOperator ? str(operator.kind) : "prompt"}
            disabled={readOnly}
            options={[{ value: "prompt", label: "a model and a prompt" }, ...operatorKinds.map((k) => ({ value: k, label: `built-in operator: ${k}` }))]}
            onChange={(v) => {
              if (v === "prompt") onPatch({ operator: undefined, prompt: str(node.prompt) || DEFAULT_TEMPLATES.summary });
              else onPatch({ operator: { kind: v }, prompt: undefined, model: undefined, temperature: undefined });
            }}
          />
        </Field>
      ) : null}

      {hasOperator ? <OperatorFields operator={operator} readOnly={readOnly} onChange={(op) => onPatch({ operator: op }, "operator")} problemAt={problemAt} /> : null}

      {usesPrompt ? (
        <>
          <div className="grid grid-cols-3 gap-2">
            <div className="col-span-2">
              <Field label="Model" htmlFor="node-model" problem={problemAt("model")} hint={str(node.model).startsWith("offline/") || !node.model ? "offline: extractive, ignores the prompt's prose" : undefined}>
                <Input id="node-model" data-testid="node-model" className="h-8" list="model-suggestions" placeholder="offline/extractive" value={str(node.model)} disabled={readOnly} onChange={(e) => set("model")(e.target.value || undefined)} />
                <datalist id="model-suggestions">
                  {modelSuggestions.map((m) => (
                    <option key={m} value={m} />
                  ))}
                </datalist>
              </Field>
            </div>
            <Field label="Temperature" htmlFor="node-temperature" problem={problemAt("temperature")}>
              <Input id="node-temperature" data-testid="node-temperature" className="h-8" inputMode="decimal" placeholder="0" value={numText(node.temperature)} disabled={readOnly} onChange={(e) => set("temperature")(toNum(e.target.value))} />
            </Field>
          </div>
          <Field label="Prompt template (Liquid)" problem={problemAt("prompt")}>
            <TemplateEditor
              value={str(node.prompt)}
              onChange={(v) => onPatch({ prompt: v }, "prompt")}
              kind={kind}
              type={type}
              sample={sample}
              onSampleChange={onSampleChange}
              readOnly={readOnly}
            />
          </Field>
        </>
      ) : null}

      {kind === "output" ? (
        <>
          <Field label="Surface" htmlFor="node-surface" problem={problemAt("surface")} hint="search: an index over the inputs; projection: the latest record(s), e.g. a context block.">
            <NativeSelect
              id="node-surface"
              value={str(node.surface)}
              options={SURFACES}
              disabled={readOnly}
              onChange={(v) => onPatch(v === "search" ? { surface: v, template: undefined, webhook: undefined } : { surface: v, embedder: undefined })}
            />
          </Field>
          {node.surface === "search" ? (
            <Field label="Embedder" htmlFor="node-embedder" problem={problemAt("embedder")} hint="default: the offline feature-hashing embedder">
              <Input id="node-embedder" className="h-8" value={str(node.embedder)} disabled={readOnly} onChange={(e) => set("embedder")(e.target.value || undefined)} />
            </Field>
          ) : (
            <>
              <Field label="Webhook URL" htmlFor="node-webhook" problem={problemAt("webhook")} hint="called when the projection changes">
                <Input
                  id="node-webhook"
                  className="h-8"
                  value={str((node.webhook as { url?: unknown } | undefined)?.url)}
                  disabled={readOnly}
                  onChange={(e) => onPatch({ webhook: e.target.value ? { url: e.target.value } : undefined }, "webhook")}
                />
              </Field>
              <Field label="Context template (Liquid, optional)" problem={problemAt("template")}>
                <TemplateEditor
                  value={str(node.template)}
                  onChange={(v) => onPatch({ template: v || undefined }, "template")}
                  kind={kind}
                  type={type}
                  sample={sample}
                  onSampleChange={onSampleChange}
                  readOnly={readOnly}
                />
              </Field>
            </>
          )}
        </>
      ) : null}

      {others.length ? (
        <div className="rounded-md border border-destructive/40 bg-destructive/5 p-2 text-xs">
          <div className="mb-1 font-medium text-destructive">Problems with this node</div>
          <ul className="space-y-1">
            {others.map((p, i) => (
              <li key={i}>
                <code className="text-[11px]">{formatPath(p.path)}</code>: {p.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
