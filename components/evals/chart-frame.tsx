"use client";
import { ResponsiveContainer } from "recharts";
import { cn } from "@/components/ui/cn";

/** Axis text of every compare chart: one size, legible at 1024 px. */
export const AXIS_TICK = { fontSize: 11 };

/** A chart's box: a fixed height, the full width, a test id the browser tests find it by. */
export function ChartFrame({ testId, height = 260, className, children }: { testId: string; height?: number; className?: string; children: React.ReactElement }) {
  return (
    <div data-testid={testId} className={cn("w-full min-w-0", className)} style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

/** A share metric's axis from a tenth below the lowest value up to at most 1 (never "1.020"). */
export const SHARE_DOMAIN: [(min: number) => number, (max: number) => number] = [(min) => Math.max(0, Math.floor(min * 10 - 0.5) / 10), (max) => (max <= 1 ? 1 : Math.ceil(max))];

/** Short numbers for axis ticks: 1.2k, 35, 0.25. */
export function compactNumber(v: number): string {
  if (!Number.isFinite(v)) return "";
  if (Math.abs(v) >= 1000) return new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 }).format(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 10 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(2);
}
