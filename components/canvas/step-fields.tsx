"use client";
/**
 * The node inspector's field groups for step kinds with more than a prompt and a model: aggregate,
 * merge, entities (with its dictionary), relations, insights, and an operator's parameters.
 */
import { useState } from "react";
import { Input } from "@/components/ui/input";
import { Textarea } from "@/components/ui/textarea";
import { CONFLICTS, INSIGHT_KINDS, PERIODS } from "@/server/pipeline/rules";
import type { DraftNode } from "./spec-graph";
import { Field, NativeSelect, numText, str, toNum, type FieldsProps, type Patch } from "./field";

export function AggregateFields({ node, readOnly, onPatch, problem }: { node: DraftNode; readOnly: boolean; onPatch: (p: Patch, k?: string) => void; problem?: string }) {
  const groupBy = (node.groupBy ?? {}) as Record<string, unknown>;
  const mode = "key" in groupBy ? "key" : "every" in groupBy ? "every" : "period";
  return (
    <div className="grid grid-cols-2 gap-2">
      <Field label="Group by" htmlFor="node-groupby-mode" problem={problem}>
        <NativeSelect
          id="node-groupby-mode"
          testId="node-groupby-mode"
          value={mode}
          disabled={readOnly}
          options={[
            { value: "period", label: "period" },
            { value: "key", label: "metadata key" },
            { value: "every", label: "count window" },
          ]}
          onChange={(v) => onPatch({ groupBy: v === "period" ? { period: "month" } : v === "key" ? { key: "chat.conversation_id" } : { every: 10 } })}
        />
      </Field>
      {mode === "period" ? (
        <Field label="Period" htmlFor="node-period">
          <NativeSelect id="node-period" testId="node-period" value={str(groupBy.period)} options={PERIODS} disabled={readOnly} onChange={(v) => onPatch({ groupBy: { period: v } })} />
        </Field>
      ) : mode === "key" ? (
        <Field label="Key" htmlFor="node-key">
          <Input id="node-key" className="h-8" value={str(groupBy.key)} disabled={readOnly} onChange={(e) => onPatch({ groupBy: { key: e.target.value } }, "groupBy")} />
        </Field>
      ) : (
        <Field label="Every" htmlFor="node-every">
          <Input id="node-every" className="h-8" value={numText(groupBy.every)} disabled={readOnly} onChange={(e) => onPatch({ groupBy: { every: toNum(e.target.value) ?? "" } }, "groupBy")} />
        </Field>
      )}
    </div>
  );
}

export function MergeFields({ node, readOnly, onPatch, problemAt }: { node: DraftNode; readOnly: boolean; onPatch: (p: Patch, k?: string) => void; problemAt: (...p: (string | number)[]) => string | undefined }) {
  const dedupe = node.dedupe;
  const mode = typeof dedupe === "string" ? dedupe : dedupe && typeof dedupe === "object" ? ("fuzzy" in dedupe ? "fuzzy" : "metadataMatch") : "content_hash";
  const obj = (dedupe ?? {}) as Record<string, unknown>;
  return (
    <div className="grid grid-cols-2 gap-2">
      <Field label="Dedupe" htmlFor="node-dedupe" problem={problemAt("dedupe")}>
        <NativeSelect
          id="node-dedupe"
          testId="node-dedupe"
          value={mode}
          disabled={readOnly}
          options={["content_hash", "none", "metadataMatch", "fuzzy"]}
          onChange={(v) => onPatch({ dedupe: v === "metadataMatch" ? { metadataMatch: ["chat.conversation_id"] } : v === "fuzzy" ? { fuzzy: 0.9 } : v })}
        />
      </Field>
      <Field label="Conflict" htmlFor="node-conflict" problem={problemAt("conflict")}>
        <NativeSelect id="node-conflict" testId="node-conflict" value={str(node.conflict) || "prefer_latest"} options={CONFLICTS} disabled={readOnly} onChange={(v) => onPatch({ conflict: v })} />
      </Field>
      {mode === "metadataMatch" ? (
        <div className="col-span-2">
          <Field label="Match fields (comma-separated)" htmlFor="node-match">
            <Input
              id="node-match"
              className="h-8"
              value={Array.isArray(obj.metadataMatch) ? obj.metadataMatch.join(", ") : ""}
              disabled={readOnly}
              onChange={(e) => onPatch({ dedupe: { metadataMatch: e.target.value.split(",").map((s) => s.trim()).filter(Boolean) } }, "dedupe")}
            />
          </Field>
        </div>
      ) : mode === "fuzzy" ? (
        <div className="col-span-2">
          <Field label="Fuzzy threshold (0..1)" htmlFor="node-fuzzy">
            <Input id="node-fuzzy" className="h-8" value={numText(obj.fuzzy)} disabled={readOnly} onChange={(e) => onPatch({ dedupe: { fuzzy: toNum(e.target.value) ?? "" } }, "dedupe")} />
          </Field>
        </div>
      ) : null}
    </div>
  );
}


/** `{ Melanie: ["Mel"] }` ⇄ "Melanie: Mel" lines. */
export function dictionaryText(dictionary: unknown): string {
  if (!dictionary || typeof dictionary !== "object") return "";
  return Object.entries(dictionary as Record<string, unknown>)
    .map(([name, aliases]) => `${name}${Array.isArray(aliases) && aliases.length ? `: ${aliases.join(", ")}` : ""}`)
    .join("\n");
}

export function parseDictionary(text: string): Record<string, string[]> | undefined {
  const out: Record<string, string[]> = {};
  for (const line of text.split("\n")) {
    const [name, rest = ""] = line.split(/:(.*)/s) as [string, string?];
    if (!name.trim()) continue;
    out[name.trim()] = rest.split(",").map((a) => a.trim()).filter(Boolean);
  }
  return Object.keys(out).length ? out : undefined;
}

const ENTITIES_PROMPT = "List the named entities this text mentions (people, places, organizations, things, events), each with its type and any other names the text uses for it.\n\n{{ record.content }}";

export function EntitiesFields({ node, readOnly, onPatch, problemAt }: FieldsProps) {
  const [draft, setDraft] = useState(() => dictionaryText(node.dictionary));
  const [seen, setSeen] = useState(node.dictionary);
  if (seen !== node.dictionary && JSON.stringify(parseDictionary(draft)) !== JSON.stringify(node.dictionary)) {
    // Undo/redo changed the dictionary: show it.
    setSeen(node.dictionary);
    setDraft(dictionaryText(node.dictionary));
  }
  const withModel = typeof node.prompt === "string";
  return (
    <>
      <Field label="Runs with" htmlFor="node-entities-mode" problem={problemAt("prompt")}>
        <NativeSelect
          id="node-entities-mode"
          testId="node-entities-mode"
          value={withModel ? "prompt" : "offline"}
          disabled={readOnly}
          options={[
            { value: "offline", label: "offline: speakers, capitalised names, dictionary" },
            { value: "prompt", label: "a model and a prompt (structured output)" },
          ]}
          onChange={(v) => onPatch(v === "prompt" ? { prompt: ENTITIES_PROMPT } : { prompt: undefined, model: undefined, temperature: undefined, output: undefined })}
        />
      </Field>
      <Field label="Dictionary (one per line: Name: alias, alias)" htmlFor="node-dictionary" problem={problemAt("dictionary")} hint="Known entities: always recognised, their aliases always merged.">
        <Textarea
          id="node-dictionary"
          data-testid="node-dictionary"
          className="min-h-16 font-mono text-xs"
          placeholder={"Melanie: Mel\nRiverside Library"}
          value={draft}
          disabled={readOnly}
          onChange={(e) => {
            setDraft(e.target.value);
            const next = parseDictionary(e.target.value);
            setSeen(next);
            onPatch({ dictionary: next }, "dictionary");
          }}
        />
      </Field>
    </>
  );
}

export function RelationsFields({ node, readOnly, onPatch, problemAt }: FieldsProps) {
  const functional = Array.isArray(node.functional) ? (node.functional as string[]).join(", ") : "";
  return (
    <>
      <Field
        label="Functional predicates (comma-separated)"
        htmlFor="node-functional"
        problem={problemAt("functional")}
        hint="One value at a time: a later different value supersedes the earlier belief (both kept). Empty: lives in, works at, works as, is from, is married to, is dating, favorite … is."
      >
        <Input
          id="node-functional"
          data-testid="node-functional"
          className="h-8"
          placeholder="lives in, works at"
          value={functional}
          disabled={readOnly}
          onChange={(e) => {
            const list = e.target.value.split(",").map((p) => p.trim()).filter(Boolean);
            onPatch({ functional: list.length ? list : undefined }, "functional");
          }}
        />
      </Field>
      <label className="flex items-center gap-2 text-xs">
        <input type="checkbox" data-testid="node-comentions" checked={node.coMentions !== false} disabled={readOnly} onChange={(e) => onPatch({ coMentions: e.target.checked ? undefined : false })} />
        Link entities named together (&quot;mentioned with&quot; edges)
      </label>
    </>
  );
}

export function InsightsFields({ node, readOnly, onPatch, problemAt }: FieldsProps) {
  const kinds = Array.isArray(node.kinds) ? (node.kinds as string[]) : [...INSIGHT_KINDS];
  return (
    <Field label="Insights" problem={problemAt("kinds")} hint="Read from a relations step (and, for mention counts in digests, the entities step).">
      <div className="flex flex-wrap gap-3">
        {INSIGHT_KINDS.map((k) => (
          <label key={k} className="flex items-center gap-1 text-xs">
            <input
              type="checkbox"
              data-testid={`node-insight-${k}`}
              checked={kinds.includes(k)}
              disabled={readOnly}
              onChange={(e) => {
                const next = INSIGHT_KINDS.filter((x) => (x === k ? e.target.checked : kinds.includes(x)));
                onPatch({ kinds: next.length === INSIGHT_KINDS.length ? undefined : next });
              }}
            />
            {k}
          </label>
        ))}
      </div>
    </Field>
  );
}

const OPERATOR_PARAMS: Record<string, { key: string; label: string; numeric: boolean; placeholder: string }[]> = {
  "extractive-summary": [{ key: "sentences", label: "Sentences kept", numeric: true, placeholder: "3" }],
  "json-pick": [{ key: "field", label: "JSON field", numeric: false, placeholder: "data.text" }],
  topic: [{ key: "fallback", label: "Fallback topic", numeric: false, placeholder: "general" }],
  chunk: [
    { key: "size", label: "Chunk size (chars)", numeric: true, placeholder: "1200" },
    { key: "overlap", label: "Overlap (chars)", numeric: true, placeholder: "0" },
  ],
  sentences: [{ key: "per", label: "Sentences per record", numeric: true, placeholder: "1" }],
  turns: [
    { key: "size", label: "Turns per window", numeric: true, placeholder: "3" },
    { key: "stride", label: "Stride (turns)", numeric: true, placeholder: "1" },
  ],
};

/** `{ ...operator, key: value }`, or without `key` when `value` is undefined (the operator's default). */
function withParam(operator: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const next = { ...operator };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/** The turns operator's switches: where a window sits on its turn, and how the session date is written. */
function TurnsOptions({ operator, readOnly, onChange, problemAt }: { operator: Record<string, unknown>; readOnly: boolean; onChange: (op: Record<string, unknown>) => void; problemAt: (...p: (string | number)[]) => string | undefined }) {
  return (
    <>
      <Field label="Session date" htmlFor="op-date" problem={problemAt("operator", "date")} hint="Compact: “1:56 pm on 8 May, 2023” is written “8 May 2023 13:56” in each window's header.">
        <NativeSelect
          id="op-date"
          testId="op-date"
          value={str(operator.date) || "as-written"}
          disabled={readOnly}
          options={[
            { value: "as-written", label: "as written" },
            { value: "compact", label: "compact" },
          ]}
          onChange={(v) => onChange(withParam(operator, "date", v === "as-written" ? undefined : v))}
        />
      </Field>
      <label className="flex items-center gap-2 self-end pb-2 text-xs">
        <input type="checkbox" data-testid="op-centered" checked={operator.centered === true} disabled={readOnly} onChange={(e) => onChange(withParam(operator, "centered", e.target.checked ? true : undefined))} />
        Centre each window on its turn
      </label>
    </>
  );
}

export function OperatorFields({ operator, readOnly, onChange, problemAt }: { operator: Record<string, unknown>; readOnly: boolean; onChange: (op: Record<string, unknown>) => void; problemAt: (...p: (string | number)[]) => string | undefined }) {
  const params = OPERATOR_PARAMS[str(operator.kind)] ?? [];
  if (!params.length) return null;
  return (
    <div className="grid grid-cols-2 gap-2">
      {params.map((p) => (
        <Field key={p.key} label={p.label} htmlFor={`op-${p.key}`} problem={problemAt("operator", p.key)}>
          <Input
            id={`op-${p.key}`}
            className="h-8"
            placeholder={p.placeholder}
            value={p.numeric ? numText(operator[p.key]) : str(operator[p.key])}
            disabled={readOnly}
            onChange={(e) => onChange(withParam(operator, p.key, p.numeric ? toNum(e.target.value) : e.target.value))}
          />
        </Field>
      ))}
      {operator.kind === "turns" ? <TurnsOptions operator={operator} readOnly={readOnly} onChange={onChange} problemAt={problemAt} /> : null}
    </div>
  );
}
