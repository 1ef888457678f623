"use client";
import { fmtUsd } from "@/components/runs/format";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { RunDot } from "./run-dot";
import { fmtMetric, type CompareChartsData } from "./format";

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * Cost per step as a table: per run what its memory cost to build (tokens, USD) and what a query
 * costs (context tokens, search latency), then each step of its build on its own line — runs of
 * different architectures have different steps, so a step is named where it is counted.
 */
export function CostPerStep({ data, colors }: { data: CompareChartsData; colors: Map<string, string> }) {
  const labels = new Map(data.runs.map((r) => [r.id, r.label]));
  return (
    <Table data-testid="cost-per-step" className="table-fixed">
      <colgroup>
        <col className="w-[24%]" />
        <col className="w-[11%]" />
        <col className="w-[10%]" />
        <col className="w-[11%]" />
        <col className="w-[10%]" />
        <col />
      </colgroup>
      <TableHeader>
        <TableRow>
          <TableHead>Run</TableHead>
          <TableHead className="text-right whitespace-normal">Build tokens</TableHead>
          <TableHead className="text-right whitespace-normal">Build cost</TableHead>
          <TableHead className="text-right whitespace-normal">Context tokens / query</TableHead>
          <TableHead className="text-right whitespace-normal">Search p50</TableHead>
          <TableHead>Per step (records · tokens · USD)</TableHead>
        </TableRow>
      </TableHeader>
      <TableBody>
        {data.costPerStep.rows.map((r) => (
          <TableRow key={r.runId} data-testid="cost-row">
            <TableCell className="whitespace-normal">
              <span className="flex min-w-0 items-center gap-2">
                <RunDot color={colors.get(r.runId)!} />
                <span className="min-w-0 break-words">{labels.get(r.runId)}</span>
              </span>
            </TableCell>
            <TableCell className="text-right tabular-nums">{int(r.buildTokens)}</TableCell>
            <TableCell className="text-right tabular-nums">{fmtUsd(r.buildCostUsd)}</TableCell>
            <TableCell className="text-right tabular-nums">{fmtMetric("context_tokens", r.contextTokens)}</TableCell>
            <TableCell className="text-right tabular-nums">{r.latencyP50 === null ? "—" : `${r.latencyP50.toFixed(1)} ms`}</TableCell>
            <TableCell className="whitespace-normal">
              <ul className="flex flex-wrap gap-1.5">
                {r.perStep.map((s) => (
                  <li key={s.step} className="rounded border px-1.5 py-0.5 text-xs tabular-nums" data-testid="cost-step">
                    <span className="font-mono">{s.step}</span> {int(s.records)} · {int(s.tokens)} · {fmtUsd(s.costUsd)}
                  </li>
                ))}
                {r.perStep.length === 0 && <li className="text-xs text-muted-foreground">no build recorded</li>}
              </ul>
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
