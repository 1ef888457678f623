"use client";
import { liquid } from "@codemirror/lang-liquid";
import CodeMirror, { EditorView } from "@uiw/react-codemirror";
import { useTheme } from "next-themes";
import { useMemo } from "react";
import { checkTemplate, renderTemplate, type TemplateRecord, type TemplateVars } from "@/server/pipeline/prompts";

const extensions = [liquid(), EditorView.lineWrapping];

export const SAMPLE_CONTENT = `User: We agreed to move the Lisbon offsite to May 12-14. Can you draft the agenda?
Assistant: Sure. Day 1: roadmap review with Dana. Day 2: the pricing experiment results. Day 3: hiring plan for two backend engineers.
User: Great, and remind me to book the venue before Friday.`;

/** Template variables for a preview: a sample input record shaped like what this step type receives. */
export function sampleVars(kind: string, type: string, content: string): TemplateVars {
  const scope = "acme:eng:alice";
  const now = "2024-04-01T09:00:00.000Z";
  const record: TemplateRecord = {
    id: "rec_sample_1",
    content,
    scope,
    metadata: {
      time: { created_at: "2024-03-14T10:22:00.000Z", period: "2024-03" },
      chat: { conversation_id: "conv_42", title: "Planning the Lisbon offsite", author: "user" },
    },
  };
  const second: TemplateRecord = {
    id: "rec_sample_2",
    content: "The user compared Postgres full-text search with pgvector for the support bot and chose hybrid search.",
    scope,
    metadata: { time: { created_at: "2024-03-20T16:05:00.000Z", period: "2024-03" } },
  };
  if (type === "aggregate") return { records: [record, second], group: { key: "2024-03", scope, size: 2 }, scope, now };
  if (type === "fold") return { record, state: "- The user works at Acme on the support bot.", scope, now };
  if (type === "consolidate") return { record, records: [second], scope, now };
  if (kind === "output") return { record, records: [record, second], scope, now };
  return { record, scope, now };
}

export function TemplateEditor({
  value,
  onChange,
  kind,
  type,
  sample,
  onSampleChange,
  readOnly,
}: {
  value: string;
  onChange: (value: string) => void;
  kind: string;
  type: string;
  sample: string;
  onSampleChange: (value: string) => void;
  readOnly?: boolean;
}) {
  const { resolvedTheme } = useTheme();
  const check = useMemo(() => checkTemplate(value), [value]);
  const preview = useMemo(() => {
    if (!check.ok) return { ok: false as const, text: `${check.message}${check.line ? ` (line ${check.line})` : ""}` };
    try {
      return { ok: true as const, text: renderTemplate(value, sampleVars(kind, type, sample)) };
    } catch (err) {
      return { ok: false as const, text: err instanceof Error ? err.message : String(err) };
    }
  }, [check, value, kind, type, sample]);
  return (
    <div className="space-y-2">
      <div data-testid="template-editor" className="overflow-hidden rounded-md border text-xs">
        <CodeMirror
          value={value}
          onChange={onChange}
          extensions={extensions}
          theme={resolvedTheme === "dark" ? "dark" : "light"}
          readOnly={readOnly}
          minHeight="160px"
          maxHeight="320px"
          basicSetup={{ foldGutter: false, closeBrackets: false, autocompletion: false, highlightActiveLine: false }}
          aria-label="Prompt template"
        />
      </div>
      {check.ok && check.unknownVariables.length ? (
        <p className="text-xs text-warning-foreground">
          Unknown variable{check.unknownVariables.length > 1 ? "s" : ""}: {check.unknownVariables.join(", ")} (templates can use record,
          records, group, state, scope, now)
        </p>
      ) : null}
      <details className="text-xs">
        <summary className="cursor-pointer text-muted-foreground">Sample input record (edit to try the template)</summary>
        <textarea
          data-testid="sample-input"
          className="mt-1 h-24 w-full rounded-md border bg-transparent p-2 font-mono text-xs"
          value={sample}
          onChange={(e) => onSampleChange(e.target.value)}
        />
      </details>
      <div>
        <div className="mb-1 text-[11px] font-medium uppercase tracking-wide text-muted-foreground">Live preview</div>
        <pre
          data-testid="template-preview"
          data-error={preview.ok ? undefined : "true"}
          className={
            preview.ok
              ? "max-h-64 overflow-auto whitespace-pre-wrap rounded-md bg-muted p-2 font-mono text-[11px]"
              : "max-h-64 overflow-auto whitespace-pre-wrap rounded-md border border-destructive/40 bg-destructive/10 p-2 font-mono text-[11px] text-destructive"
          }
        >
          {preview.text}
        </pre>
      </div>
    </div>
  );
}
