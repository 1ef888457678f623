/**
 * Pyramid's offline observations (one per conversation turn) repeat their session's date: written
 * compactly ("8 May 2023 13:56" instead of "1:56 pm on 8 May, 2023"), the same information in
 * fewer of the context's tokens, still readable as a date; the other templates' windows keep the
 * header as written.
 */
import { describe, expect, it } from "vitest";
import { applySplitOperator, type SplitPart } from "../../engine/operators";
import { estimateContextTokens, scoreCase } from "../../eval/metrics";
import { sessionContent } from "../../eval/types";
import { parseDateRange } from "../../search/dates";
import type { PipelineSpec } from "../spec";
import { templateSpec } from ".";

const session = sessionContent({
  id: "1",
  time: "2023-05-08T13:56:00.000Z",
  dateLabel: "1:56 pm on 8 May, 2023",
  turns: [
    { id: "D1:1", speaker: "Caroline", text: "I went to the LGBTQ support group yesterday." },
    { id: "D1:2", speaker: "Melanie", text: "The race is on May 20, 2023 at 9:00 am." },
  ],
});

function turnsOperatorOf(spec: PipelineSpec, step: string) {
  const s = spec.steps.find((x) => x.name === step);
  if (!s || s.type !== "split" || !s.operator) throw new Error(`${step} is not an operator split`);
  return s.operator;
}

const contents = (parts: Array<string | SplitPart>) => parts.map((p) => (typeof p === "string" ? p : p.content));

describe("pyramid's offline observations", () => {
  const observations = contents(applySplitOperator(turnsOperatorOf(templateSpec("pyramid", "json"), "observations"), session));

  it("one per turn, headed by the session's date written compactly; the turn's own words as said", () => {
    expect(observations).toEqual([
      "# 8 May 2023 13:56\n\nCaroline: I went to the LGBTQ support group yesterday.",
      "# 8 May 2023 13:56\n\nMelanie: The race is on May 20, 2023 at 9:00 am.",
    ]);
  });

  it("the date costs fewer context tokens than as written (6 words → 4), and still reads as that day", () => {
    const asWritten = contents(applySplitOperator({ kind: "turns", size: 1, stride: 1 }, session));
    expect(asWritten[0]).toBe("# 1:56 pm on 8 May, 2023\n\nCaroline: I went to the LGBTQ support group yesterday.");
    expect(estimateContextTokens(asWritten[0]!) - estimateContextTokens(observations[0]!)).toBe(3);
    expect(parseDateRange(observations[0]!)).toMatchObject({ from: "2023-05-08T00:00:00.000Z", text: "8 may 2023" });
    const hit = { id: "o", sessions: ["1"], turns: ["D1:1"], tokens: estimateContextTokens(observations[0]!), reachesSource: true, content: observations[0] };
    expect(scoreCase({ evidence: ["D1:1"], evidenceSessions: ["1"], hits: [hit], temporalAnswer: "8 May, 2023" }).temporal_accuracy).toBe(1);
  });

  it("with a model, observations are the model's (no turns operator)", () => {
    expect(templateSpec("pyramid", "json", { model: "openai/gpt-4o-mini" }).steps.find((s) => s.name === "observations")).not.toHaveProperty("operator");
  });
});

describe("the other templates' turn windows keep the header as written", () => {
  for (const [id, step] of [["chat-memory", "windows"], ["bm25-windows", "windows"], ["synapse", "windows"], ["synapsis", "turns"], ["synapsis", "windows"]] as const) {
    it(`${id} ${step}`, () => {
      const op = turnsOperatorOf(templateSpec(id, "json"), step);
      expect(op).toMatchObject({ kind: "turns" });
      expect(op).not.toHaveProperty("date");
      expect(contents(applySplitOperator(op, session))[0]).toMatch(/^# 1:56 pm on 8 May, 2023\n\n/);
    });
  }
});
