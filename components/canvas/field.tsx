"use client";
/** The form parts the node inspector is made of: a labelled field with its hint or problem, a native select, and value converters. */
import type { ReactNode } from "react";
import { Label } from "@/components/ui/label";
import type { DraftNode } from "./spec-graph";

export type Patch = Record<string, unknown>;
export const str = (v: unknown) => (typeof v === "string" ? v : "");
export const numText = (v: unknown) => (typeof v === "number" ? String(v) : typeof v === "string" ? v : "");
/** Empty → unset (the default applies); a number when it parses; else the raw text (validation flags it). */
export const toNum = (text: string): unknown => (text.trim() === "" ? undefined : Number.isFinite(Number(text)) ? Number(text) : text);

export function Field({ label, htmlFor, hint, problem, children }: { label: string; htmlFor?: string; hint?: ReactNode; problem?: string; children: ReactNode }) {
  return (
    <div className="space-y-1">
      <Label htmlFor={htmlFor} className="text-xs">
        {label}
      </Label>
      {children}
      {problem ? <p className="text-xs text-destructive">{problem}</p> : hint ? <p className="text-[11px] text-muted-foreground">{hint}</p> : null}
    </div>
  );
}

export function NativeSelect({ id, value, options, onChange, disabled, testId }: { id?: string; value: string; options: readonly (string | { value: string; label: string })[]; onChange: (v: string) => void; disabled?: boolean; testId?: string }) {
  return (
    <select
      id={id}
      data-testid={testId}
      disabled={disabled}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      className="h-8 w-full rounded-md border border-input bg-transparent px-2 text-sm shadow-xs dark:bg-input/30"
    >
      {options.map((o) => {
        const opt = typeof o === "string" ? { value: o, label: o } : o;
        return (
          <option key={opt.value} value={opt.value}>
            {opt.label}
          </option>
        );
      })}
    </select>
  );
}

/** What a step kind's field group gets: its node, whether it is read-only, how to patch it, and the problem at a path. */
export type FieldsProps = { node: DraftNode; readOnly: boolean; onPatch: (p: Patch, k?: string) => void; problemAt: (...p: (string | number)[]) => string | undefined };
