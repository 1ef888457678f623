import { fmtUsd } from "@/components/runs/format";
import { fmtMetric, type ComparedRun, type EvalRunSummary } from "./format";
import { plural } from "@/components/ui/plural";
/** j when measured (with the judge model and what it cost on hover), else why it was not. */
export function JudgeCell({ run }: { run: { status?: EvalRunSummary["status"]; metrics: EvalRunSummary["metrics"]; judge: EvalRunSummary["judge"] | ComparedRun["judge"] } }) {
  if (run.status !== undefined && run.status !== "completed") return <>—</>;
  const judge = run.judge;
  if (run.metrics.j !== undefined) {
    const unjudged = (judge.garbage ?? 0) + (judge.failed ?? 0) + (judge.overBudget ?? 0);
    const title = `judged by ${judge.judgeModel} (answers by ${judge.answerModel}) on ${plural(judge.judged ?? 0, "question")}${unjudged ? `, ${unjudged} not judged` : ""}; spent ${fmtUsd(judge.spentUsd)} of ${fmtUsd(judge.budgetUsd)}`;
    return (
      <span title={title} data-measured="true">
        {fmtMetric("j", run.metrics.j)}
      </span>
    );
  }
  const reason = judge.measured ? `a model answered, but no answer was judged (${judge.garbage ?? 0} unreadable verdicts, ${judge.failed ?? 0} failed calls, ${judge.overBudget ?? 0} over budget)` : (judge.reason ?? "j was not measured");
  return (
    <span className="text-xs text-muted-foreground" title={reason} data-measured="false">
      not measured
    </span>
  );
}
