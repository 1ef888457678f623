/**
 * Pairwise preference in replay (issue 37): with a judge model configured, each replayed query
 * asks the judge which retrieved context — main's top hits or the branch's — answers the query
 * better. Position bias is controlled by asking both orders (main as A, then main as B): a side
 * wins only when both orders pick it; a split or a tie is a tie (MT-Bench's conservative rule).
 * Identical contexts are a tie without a call. The report counts wins, losses, ties and unreadable
 * replies, the branch's win rate (ties count half) and a paired 95% interval of branch − main
 * preference (+1 branch, −1 main, 0 tie per query). Without a judge model the preference is
 * "not measured" — never a made-up number. Spending stops at the budget like the eval judge.
 */
import { Liquid } from "liquidjs";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { ModelError, type ModelProvider } from "../engine/model";
import { parseModelId } from "../llm/sdk-model";
import { workspaceModel } from "../llm/workspace-model";
import { availableProviders } from "../services/provider-check";
import { truncateToTokens } from "../text/tokens";
import { DEFAULT_BUDGET_USD } from "./judge";
import { CONTEXT_BUDGET } from "./metrics";
import { pairedInterval, type PairedInterval } from "./replay-metrics";

export const PREFERENCE_PROMPT = `You compare two retrieved contexts for the same question.
Which context lets an assistant answer the question better: more of the facts the answer needs, fewer that mislead?
Judge the content only, not which context comes first or which is longer. If they are equally useful (or equally useless), say tie.

Question: {{ question }}

Context A:
{{ a }}

Context B:
{{ b }}

Reply with JSON only: {"better": "A"}, {"better": "B"} or {"better": "tie"}.`;

export type Preference = "branch" | "main" | "tie";

export interface QueryPreference {
  /** Who answers better after both orders; null when a reply was unreadable, a call failed or the budget was spent. */
  winner: Preference | null;
  /** Both sides served the same ids: a tie without asking. */
  identical: boolean;
  /** The judge's two verdicts (main as A, then main as B), as read; null = unreadable or not asked. */
  verdicts: [Preference | null, Preference | null];
}

export type PreferenceSummary =
  | { measured: false; reason: string }
  | {
      measured: true;
      judgeModel: string;
      prompt: string;
      orders: "both";
      budgetUsd: number;
      spentUsd: number;
      calls: number;
      branchWins: number;
      mainWins: number;
      ties: number;
      /** Queries whose verdict could not be read or whose call failed. */
      unjudged: number;
      /** Queries left unjudged because the budget was spent. */
      overBudget: number;
      /** (branch wins + ties / 2) / judged queries; null when none was judged. */
      winRate: number | null;
      /** Per query +1 branch, −1 main, 0 tie: the mean and its paired 95% interval. */
      interval: PairedInterval;
      /** Up to five unreadable or failed replies. */
      samples: Array<{ query: string; reply: string }>;
    };

export const PREFERENCE_NOT_MEASURED: PreferenceSummary = {
  measured: false,
  reason: "not measured: no judge model was given (pass judgeModel, e.g. openai/gpt-4o-mini), so no preference was asked",
};

export interface JudgeOptions {
  judgeModel: string;
  budgetUsd?: number;
}

/** Refuses (before anything is replayed) a judge model that is not provider/model or whose provider this workspace cannot call. */
export async function assertPreferenceJudge(db: Db, workspaceId: string, options: JudgeOptions): Promise<void> {
  const { provider, name } = parseModelId(options.judgeModel);
  if (!provider || !name) throw badRequest(`judgeModel: "${options.judgeModel.slice(0, 200)}" is not provider/model (e.g. openai/gpt-4o-mini).`);
  if (provider === "offline") throw badRequest("judgeModel: the offline model cannot judge which context is better; name a configured provider's model.");
  const available = await availableProviders(db, workspaceId);
  if (!available.includes(provider)) {
    throw badRequest(`judgeModel: "${options.judgeModel.slice(0, 200)}" needs a provider named "${provider}", which this workspace does not have. Add it in Settings → Models (configured: ${available.join(", ")}).`);
  }
  const budget = options.budgetUsd ?? DEFAULT_BUDGET_USD;
  if (!(budget > 0 && budget <= 1000)) throw badRequest("budgetUsd: more than $0 and at most $1000.");
}

/** A verdict reply: {"better": "A"|"B"|"tie"} or the bare word; anything else is null. */
export function parsePreference(reply: string): "A" | "B" | "tie" | null {
  const text = reply.trim();
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  let word = text;
  if (json) {
    try {
      const better = (JSON.parse(json) as { better?: unknown }).better;
      if (typeof better === "string") word = better;
    } catch {
      // not JSON: read the bare word
    }
  }
  const w = word.trim().replace(/^["'`]+|["'`.!]+$/g, "").toLowerCase();
  if (w === "a" || w === "context a") return "A";
  if (w === "b" || w === "context b") return "B";
  if (w === "tie" || w === "equal" || w === "same") return "tie";
  return null;
}

const liquid = new Liquid({ strictVariables: false });

const render = (contents: string[]) => truncateToTokens(contents.map((c, i) => `[${i + 1}] ${c}`).join("\n\n") || "(nothing retrieved)", CONTEXT_BUDGET);

/** Asks the judge per query, both orders, within a budget. */
export class PreferenceJudge {
  private readonly tpl = liquid.parse(PREFERENCE_PROMPT);
  private spent = 0;
  private calls = 0;
  private unjudged = 0;
  private overBudget = 0;
  private readonly samples: Array<{ query: string; reply: string }> = [];
  private readonly results: QueryPreference[] = [];
  readonly budgetUsd: number;

  constructor(
    private readonly model: ModelProvider,
    private readonly judgeModel: string,
    budgetUsd?: number,
  ) {
    this.budgetUsd = budgetUsd ?? DEFAULT_BUDGET_USD;
  }

  static forWorkspace(db: Db, workspaceId: string, options: JudgeOptions) {
    return new PreferenceJudge(workspaceModel(db, workspaceId), options.judgeModel, options.budgetUsd);
  }

  private sample(query: string, reply: string) {
    if (this.samples.length < 5) this.samples.push({ query: query.slice(0, 200), reply: reply.slice(0, 300) });
  }

  /** One order: the side the judge picked (mapped back from A/B), or null. */
  private async ask(query: string, a: string[], b: string[], mainIs: "A" | "B"): Promise<Preference | null> {
    const prompt = await liquid.render(this.tpl, { question: query, a: render(a), b: render(b) });
    let reply: string;
    try {
      const res = await this.model.complete({ model: this.judgeModel, prompt, temperature: 0, task: "classify", inputs: [{ id: "A", content: a.join("\n") }, { id: "B", content: b.join("\n") }], maxOutputTokens: 20 });
      this.calls += 1;
      this.spent += res.costUsd;
      reply = res.text;
    } catch (err) {
      // A provider that refuses every call (bad key, unknown model) fails the replay with the reason.
      if (err instanceof ModelError && err.kind === "permanent") throw err;
      this.sample(query, `error: ${(err as Error).message}`);
      return null;
    }
    const picked = parsePreference(reply);
    if (picked === null) this.sample(query, reply);
    if (picked === null || picked === "tie") return picked;
    return picked === mainIs ? "main" : "branch";
  }

  /** The preference of one replayed query; `main`/`branch` are the contents of each side's top hits, in rank order. */
  async judge(query: string, main: { ids: string[]; contents: string[] }, branch: { ids: string[]; contents: string[] }): Promise<QueryPreference> {
    let result: QueryPreference;
    if (main.ids.length === branch.ids.length && main.ids.every((id, i) => id === branch.ids[i])) {
      result = { winner: "tie", identical: true, verdicts: ["tie", "tie"] };
    } else if (this.spent >= this.budgetUsd) {
      this.overBudget += 1;
      result = { winner: null, identical: false, verdicts: [null, null] };
    } else {
      const first = await this.ask(query, main.contents, branch.contents, "A");
      const second = await this.ask(query, branch.contents, main.contents, "B");
      let winner: Preference | null;
      if (first === null || second === null) {
        winner = null;
        this.unjudged += 1;
      } else winner = first === second ? first : "tie";
      result = { winner, identical: false, verdicts: [first, second] };
    }
    this.results.push(result);
    return result;
  }

  summary(): PreferenceSummary {
    const judged = this.results.filter((r) => r.winner !== null);
    const count = (w: Preference) => judged.filter((r) => r.winner === w).length;
    const branchWins = count("branch");
    const mainWins = count("main");
    const ties = count("tie");
    const score = (w: Preference | null) => (w === "branch" ? 1 : w === "main" ? -1 : 0);
    return {
      measured: true,
      judgeModel: this.judgeModel,
      prompt: PREFERENCE_PROMPT,
      orders: "both",
      budgetUsd: this.budgetUsd,
      spentUsd: this.spent,
      calls: this.calls,
      branchWins,
      mainWins,
      ties,
      unjudged: this.unjudged,
      overBudget: this.overBudget,
      winRate: judged.length ? (branchWins + ties / 2) / judged.length : null,
      interval: pairedInterval(judged.map((r) => ({ main: 0, branch: score(r.winner) }))),
      samples: this.samples,
    };
  }
}
