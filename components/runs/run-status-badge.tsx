import { Badge } from "@/components/ui/badge";

const VARIANT: Record<string, "default" | "secondary" | "outline" | "destructive" | "success" | "warning"> = {
  queued: "secondary",
  running: "default",
  completed: "success",
  completed_with_errors: "warning",
  failed: "destructive",
  cancelled: "outline",
  pending: "outline",
  skipped: "outline",
};

/** A step not started yet is stored as "pending": a person reads it as queued. */
const LABEL: Record<string, string> = { pending: "queued" };

export function RunStatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <Badge variant={VARIANT[status] ?? "outline"} data-testid={testId} data-status={status}>
      {LABEL[status] ?? status.replaceAll("_", " ")}
    </Badge>
  );
}
