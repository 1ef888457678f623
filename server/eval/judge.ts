/**
 * Answers and the LLM judge `j`, with a configured model. For each question the answer model
 * reads the retrieved context (the 2,000-token cut the retrieval metrics score) and answers; the
 * judge model compares that answer with the gold one and says CORRECT or WRONG (the LoCoMo judge
 * of the Mem0 and Zep papers: lenient on wording, strict on facts). `j` is the share judged
 * CORRECT. Everything that decides the score — models, both prompts, the category names — is
 * stored with the run, so two runs' `j` can be told apart when their judges differ.
 *
 * Spending stops at the budget: once the calls so far cost `budgetUsd`, the remaining questions
 * are answered extractively and not judged, and the run says how many. A judge answer that is
 * neither verdict (garbage), or a call that fails, leaves that question unjudged, counted and
 * reported with a sample of what came back; a provider that refuses every call (bad key, unknown
 * model) fails the eval with the reason instead of scoring nothing.
 */
import { ModelError, type ModelProvider } from "../engine/model";
import { Liquid } from "liquidjs";

export const ANSWER_PROMPT = `You answer questions about a long conversation using only the memory below.
Answer in a short phrase (at most a sentence), with the exact names, dates and numbers the memory gives.
If the memory does not contain the answer, say "not mentioned".

Memory:
{{ context }}

Question: {{ question }}
Answer:`;

export const JUDGE_PROMPT = `You are grading an answer against a gold answer.
Question: {{ question }}
Gold answer: {{ gold }}
Generated answer: {{ answer }}

Be generous with wording: the generated answer is CORRECT when it states the same fact as the gold answer, even if longer or phrased differently (for dates, the same day, month or period counts). It is WRONG when it misses, contradicts or does not give that fact.
Reply with JSON only: {"label": "CORRECT"} or {"label": "WRONG"}.`;

export const DEFAULT_BUDGET_USD = 1;

export interface JudgeSettings {
  /** `provider/model` that answers from the retrieved context. */
  answerModel: string;
  /** `provider/model` that grades; defaults to the answer model. */
  judgeModel?: string;
  /** USD the answer and judge calls of this eval may spend together. */
  budgetUsd?: number;
}

/** What the run stores as `judge` (measured or not, and by what). */
export interface JudgeRecord {
  measured: boolean;
  reason?: string;
  answerModel?: string;
  judgeModel?: string;
  answerPrompt?: string;
  prompt?: string;
  /** Benchmark category key → name, as the run reported them. */
  categories?: Record<string, string>;
  budgetUsd?: number;
  spentUsd?: number;
  tokens?: number;
  calls?: number;
  judged?: number;
  /** Judge replies that were neither CORRECT nor WRONG. */
  garbage?: number;
  /** Answer or judge calls that failed (after the provider's retries). */
  failed?: number;
  /** Questions left unjudged because the budget was spent. */
  overBudget?: number;
  /** Up to five garbage or failed replies: question id and what came back. */
  samples?: Array<{ question: string; reply: string }>;
}

/** The judge record of a run without an answer model: answers are extractive and `j` is not measured. */
export const OFFLINE_JUDGE: JudgeRecord = { measured: false, reason: "offline: no model configured, so answers are extractive (the best-matching sentence of the retrieved context) and the judge score j was not measured" };

/** CORRECT → 1, WRONG → 0, anything else → null (garbage). */
export function parseVerdict(reply: string): 0 | 1 | null {
  const text = reply.trim();
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (json) {
    try {
      const label = (JSON.parse(json) as { label?: unknown }).label;
      if (typeof label === "string") return verdictWord(label);
    } catch {
      // not JSON: fall through to the bare word
    }
  }
  return verdictWord(text);
}

function verdictWord(text: string): 0 | 1 | null {
  const correct = /\bCORRECT\b/i.test(text) && !/\bINCORRECT\b/i.test(text);
  const wrong = /\b(WRONG|INCORRECT)\b/i.test(text);
  if (correct === wrong) return null;
  return correct ? 1 : 0;
}

const liquid = new Liquid({ strictVariables: false });

/** Answers and grades questions within a budget; counts what it could not grade. */
export class AnswerJudge {
  readonly record: JudgeRecord & { measured: true };
  private readonly answerTpl = liquid.parse(ANSWER_PROMPT);
  private readonly judgeTpl = liquid.parse(JUDGE_PROMPT);

  constructor(
    private readonly model: ModelProvider,
    settings: JudgeSettings,
    categories: Record<string, string>,
  ) {
    this.record = {
      measured: true,
      answerModel: settings.answerModel,
      judgeModel: settings.judgeModel ?? settings.answerModel,
      answerPrompt: ANSWER_PROMPT,
      prompt: JUDGE_PROMPT,
      categories,
      budgetUsd: settings.budgetUsd ?? DEFAULT_BUDGET_USD,
      spentUsd: 0,
      tokens: 0,
      calls: 0,
      judged: 0,
      garbage: 0,
      failed: 0,
      overBudget: 0,
      samples: [],
    };
  }

  get overBudget(): boolean {
    return this.record.spentUsd! >= this.record.budgetUsd!;
  }

  private sample(question: string, reply: string) {
    if (this.record.samples!.length < 5) this.record.samples!.push({ question, reply: reply.slice(0, 300) });
  }

  private async call(model: string, prompt: string, task: "summarize" | "classify", inputs: Array<{ id: string; content: string }>) {
    const res = await this.model.complete({ model, prompt, temperature: 0, task, inputs, maxOutputTokens: task === "classify" ? 20 : 200 });
    this.record.calls! += 1;
    this.record.spentUsd! += res.costUsd;
    this.record.tokens! += res.tokensIn + res.tokensOut;
    return res.text;
  }

  /**
   * The generated answer and its verdict, or null when the budget is spent (the caller keeps its
   * extractive answer). A permanent provider error is thrown: the eval fails with it.
   */
  async answerAndJudge(q: { id: string; question: string; gold: string }, context: Array<{ id: string; content: string }>): Promise<{ answer: string | null; j: 0 | 1 | null } | null> {
    if (this.overBudget) {
      this.record.overBudget! += 1;
      return null;
    }
    let answer: string;
    try {
      const prompt = await liquid.render(this.answerTpl, { context: context.map((c) => c.content).join("\n\n---\n\n"), question: q.question });
      answer = (await this.call(this.record.answerModel!, prompt, "summarize", context)).trim();
    } catch (err) {
      return this.failed(q.id, err);
    }
    if (this.overBudget) {
      this.record.overBudget! += 1;
      return { answer, j: null };
    }
    let reply: string;
    try {
      const prompt = await liquid.render(this.judgeTpl, { question: q.question, gold: q.gold, answer });
      reply = await this.call(this.record.judgeModel!, prompt, "classify", [{ id: q.id, content: `${q.gold}\n${answer}` }]);
    } catch (err) {
      this.failed(q.id, err);
      return { answer, j: null };
    }
    const j = parseVerdict(reply);
    if (j === null) {
      this.record.garbage! += 1;
      this.sample(q.id, reply);
    } else {
      this.record.judged! += 1;
    }
    return { answer, j };
  }

  /** A failed call: counted (the question keeps its extractive answer, unjudged); a permanent one is thrown. */
  private failed(question: string, err: unknown): { answer: null; j: null } {
    if (err instanceof ModelError && err.kind === "permanent") throw err;
    this.record.failed! += 1;
    this.sample(question, `error: ${(err as Error).message}`);
    return { answer: null, j: null };
  }
}
