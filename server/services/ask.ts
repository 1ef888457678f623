/**
 * Ask: a question answered from a pipeline's memory as an answer packet (Synapsis §4) — the
 * retrieved evidence with its provenance (each record and the source records it came from), an
 * answer with numbered citations, a confidence score and level, a critic's verdict, and an
 * abstention when the evidence is weak.
 *
 * - With a configured model (`model`, e.g. `openai/gpt-4o-mini`): the model answers from the
 *   numbered evidence citing it as [1], [2]; a critic call (the same model, or `criticModel`)
 *   checks the answer against the evidence: APPROVE returns it, REVISE retries once with the
 *   critic's feedback, REJECT abstains.
 * - Offline (no model): the answer is the evidence sentence sharing most words with the question,
 *   labelled as extractive; the critic is a deterministic support check (how much of the
 *   question that sentence covers).
 *
 * Confidence = 0.3 × top relevance + 0.3 × agreement + 0.2 × count + 0.2 × recency (Synapsis §4.3);
 * below `minConfidence` (default 0.2, level "none") or on REJECT the packet abstains and still
 * shows what was found.
 *
 * On a pipeline with an entity graph (entities and relations steps) evidence comes from graph
 * retrieval by default (mode "graph"): each evidence record carries the paths that reached it
 * (question entity → belief → … → record), a record's relevance counts its graph score, and the
 * offline critic checks entity coverage: the share of the question's entities (those the graph
 * knows, and capitalized names it does not) that the evidence reaches — by a path from or through
 * the entity, or by naming it. None reached: REJECT (abstain); all reached and the quoted sentence
 * is on a graph path or covers half the question: APPROVE; otherwise REVISE.
 */
import { Liquid } from "liquidjs";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { ModelError, type ModelProvider } from "../engine/model";
import { bm25Terms } from "../text/bm25";
import { parseModelId } from "../llm/sdk-model";
import { workspaceModel } from "../llm/workspace-model";
import { leaves } from "../search/provenance";
import { resolveBranch, type BranchContext } from "../search/context";
import { hasGraph, pathTerms, type EvidencePath, type QuestionEntity } from "../search/graph-retrieval";
import { normalizeName } from "../search/question-names";
import { search, type SearchMode, type SearchResult } from "../search/search";
import type { KeyRestrictions } from "./api-keys";
import { maySeeRecord } from "./record-visibility";

export const ASK_DEFAULT_K = 5;
export const ASK_MAX_K = 20;
export const DEFAULT_MIN_CONFIDENCE = 0.2;
const EXTRACTIVE_MODEL = "offline/extractive";
const EVIDENCE_CHARS = 2000;
const SOURCES_PER_EVIDENCE = 5;

export type ConfidenceLevel = "high" | "medium" | "low" | "none";
export type Verdict = "APPROVE" | "REVISE" | "REJECT";

export interface AskInput {
  workspaceId: string;
  pipelineId: string;
  branch: string;
  question: string;
  scope?: string;
  k?: number;
  mode?: SearchMode;
  step?: string;
  /** `provider/model` that writes the answer; omitted or `offline/…`: extractive. */
  model?: string;
  /** `provider/model` of the critic (default: the answer model). */
  criticModel?: string;
  minConfidence?: number;
  /** An API key's limits: evidence and its sources hold only records the key may see. */
  restrictions?: KeyRestrictions | null;
  /** The branch already resolved by the caller (see SearchInput). */
  branchContext?: BranchContext;
}

export interface Evidence {
  /** The number the answer cites it by: [1], [2] … */
  ref: number;
  id: string;
  step: string;
  scope: string;
  snippet: string;
  content: string;
  time: string | null;
  relevance: number;
  /** The source records it derives from (the record itself when it is a source). */
  sources: Array<{ id: string; step: string; preview: string }>;
  /** Mode graph: how the graph reached this record (question entity → belief → … → record), best first. */
  paths?: EvidencePath[];
}

/** Mode graph: the question's entities and which of them the evidence reaches. */
export interface EntityCoverage {
  /** The question's entities: names of graph entities it names, then capitalized names the graph does not know. */
  entities: string[];
  reached: string[];
  missing: string[];
  /** reached / entities (1 when the question names none). */
  coverage: number;
}

export interface AnswerPacket {
  question: string;
  /** Null when the packet abstains. */
  answer: string | null;
  abstained: boolean;
  /** Why it abstained, or what limits the answer. */
  uncertaintyReason: string | null;
  kind: "extractive" | "generated";
  model: string;
  /** How to read `answer` (an extractive answer is a quoted sentence, not a generated one). */
  label: string;
  citations: Array<{ ref: number; recordId: string; step: string }>;
  /** How the evidence was retrieved. */
  mode: SearchMode;
  /** Mode graph: entity coverage of the evidence (what the offline critic checks). */
  graph?: EntityCoverage;
  confidence: { score: number; level: ConfidenceLevel; factors: { top: number; agreement: number; count: number; recency: number } };
  critic: { verdict: Verdict; reason: string; model: string; revised: boolean };
  evidence: Evidence[];
  /** True when no record of the memory clears search's relevance floor: nothing here matches the question. */
  noMatch: boolean;
  usage: { calls: number; tokensIn: number; tokensOut: number; costUsd: number };
}

export const ANSWER_PROMPT = `Answer the question using only the numbered memory excerpts below.
Cite every claim with the excerpt numbers in square brackets, e.g. [1] or [2][3].
If the excerpts do not contain the answer, reply exactly: NOT ENOUGH INFORMATION.
{% if feedback %}
A reviewer rejected your previous answer: {{ feedback }}
Previous answer: {{ previous }}
{% endif %}
{% for e in evidence %}[{{ e.ref }}] ({{ e.step }}{% if e.time %}, {{ e.time }}{% endif %})
{{ e.content }}

{% endfor %}Question: {{ question }}
Answer:`;

export const CRITIC_PROMPT = `You check an answer against the memory excerpts it cites.
{% for e in evidence %}[{{ e.ref }}] {{ e.content }}

{% endfor %}Question: {{ question }}
Answer: {{ answer }}

APPROVE if every claim is supported by the excerpts, REVISE if it is partly supported or cites the wrong excerpt, REJECT if it is not supported.
Reply with JSON only: {"verdict": "APPROVE" | "REVISE" | "REJECT", "reason": "…"}`;

const liquid = new Liquid({ strictVariables: false });

/** Synapsis §4.3 levels. */
export function confidenceLevel(score: number): ConfidenceLevel {
  return score >= 0.7 ? "high" : score >= 0.4 ? "medium" : score >= 0.2 ? "low" : "none";
}

/** A hit's relevance, 0..1: the largest of its lexical (share of the question, by rarity), semantic and graph scores. */
function relevance(hit: SearchResult["hits"][number]): number {
  return Math.max(0, Math.min(1, Math.max(hit.score.fts ?? 0, hit.score.semantic ?? 0, hit.score.graph ?? 0)));
}

/** Whole-word, case-insensitive: does `text` name `surface`? */
function names(text: string, surface: string): boolean {
  const s = normalizeName(surface);
  return s.length > 0 && ` ${normalizeName(text)} `.includes(` ${s} `);
}

/**
 * Which of the question's entities the evidence reaches: a graph entity by a path that starts at
 * or passes through it, or by an evidence record naming it (name or the question's words for it);
 * a name the graph does not know only by being named. Null when the question names no entity.
 */
export function entityCoverage(graph: { entities: QuestionEntity[]; unknownNames: string[] }, evidence: Array<Pick<Evidence, "content" | "paths">>): EntityCoverage | null {
  // One question entity per distinct wording (an unscoped question may match one entity per scope).
  const groups = new Map<string, { label: string; ids: Set<string>; surfaces: string[] }>();
  for (const e of graph.entities) {
    const g = groups.get(e.matched) ?? { label: e.name, ids: new Set<string>(), surfaces: [e.matched] };
    g.ids.add(e.entityId);
    if (!g.surfaces.includes(e.name)) g.surfaces.push(e.name);
    groups.set(e.matched, g);
  }
  for (const name of graph.unknownNames) if (!groups.has(normalizeName(name))) groups.set(normalizeName(name), { label: name, ids: new Set(), surfaces: [name] });
  if (!groups.size) return null;
  const onPaths = new Set(evidence.flatMap((e) => (e.paths ?? []).flatMap((p) => [p.from.entityId, ...p.edges.flatMap((x) => [x.subject, x.objectEntity ?? ""])])));
  const reached: string[] = [];
  const missing: string[] = [];
  for (const g of groups.values()) {
    const hit = [...g.ids].some((id) => onPaths.has(id)) || evidence.some((e) => g.surfaces.some((s) => names(e.content, s)));
    (hit ? reached : missing).push(g.label);
  }
  return { entities: [...groups.values()].map((g) => g.label), reached, missing, coverage: Math.round((reached.length / groups.size) * 1000) / 1000 };
}

function hitTime(metadata: Record<string, unknown>): string | null {
  const time = metadata.time as { created_at?: unknown; updated_at?: unknown } | undefined;
  const value = time?.updated_at ?? time?.created_at;
  return typeof value === "string" && !Number.isNaN(Date.parse(value)) ? value : null;
}

export function confidence(evidence: Array<{ relevance: number; time: string | null }>, now = new Date()): AnswerPacket["confidence"] {
  if (!evidence.length) return { score: 0, level: "none", factors: { top: 0, agreement: 0, count: 0, recency: 0 } };
  const top = Math.max(...evidence.map((e) => e.relevance));
  // Agreement: of the best three, how many are about as relevant as the best one.
  const best = [...evidence].sort((a, b) => b.relevance - a.relevance).slice(0, 3);
  const agreement = top > 0 ? best.filter((e) => e.relevance >= top / 2).length / best.length : 0;
  const count = Math.min(evidence.filter((e) => e.relevance >= 0.2).length / 3, 1);
  // Recency: a one-year half-life on the newest evidence; undated memory counts half.
  const times = evidence.map((e) => (e.time ? Date.parse(e.time) : NaN)).filter((t) => Number.isFinite(t));
  const recency = times.length ? Math.pow(0.5, Math.max(0, now.getTime() - Math.max(...times)) / (365 * 86_400_000)) : 0.5;
  const score = 0.3 * top + 0.3 * agreement + 0.2 * count + 0.2 * recency;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { score: round(score), level: confidenceLevel(score), factors: { top: round(top), agreement: round(agreement), count: round(count), recency: round(recency) } };
}

/** The evidence sentence that shares most (stemmed, non-stop) words with the question, and the share it covers. */
export function extractiveAnswer(question: string, evidence: Evidence[]): { answer: string; ref: number; coverage: number } | null {
  const terms = new Set(bm25Terms(question));
  if (!terms.size) return null;
  let best: { answer: string; ref: number; coverage: number } | null = null;
  let bestPathScore = -1;
  for (const e of evidence) {
    // A record the graph reached is connected to the question by its paths: the words the path says
    // (the entity it started from, the beliefs on the way) count as covered for its sentences.
    const viaPath = new Set(e.paths?.length ? [...pathTerms(e.paths[0]!.edges), ...bm25Terms(e.paths[0]!.from.name)] : []);
    const pathScore = e.paths?.[0]?.score ?? 0;
    // A question in the memory ("where did I leave the key?") is not an answer, but what follows it
    // likely is: its match is credited (slightly discounted) to the next sentence that is not a question.
    let carried = 0;
    for (const line of e.content.split(/\n+|(?<=[.!?])\s+/)) {
      const text = line.replace(/^#+\s*/, "").trim();
      if (text.length < 3) continue;
      const own = new Set([...bm25Terms(text), ...viaPath].filter((t) => terms.has(t))).size / terms.size;
      if (text.endsWith("?")) {
        carried = Math.max(carried, own * 0.9);
        continue;
      }
      const coverage = Math.max(own, carried);
      carried = 0;
      // Equal coverage: the sentence the graph reached by the stronger path (a stated fact over a mere mention).
      const better = !best || coverage > best.coverage + 1e-9 || (Math.abs(coverage - best.coverage) <= 1e-9 && pathScore > bestPathScore);
      if (coverage > 0 && better) {
        best = { answer: text.slice(0, 500), ref: e.ref, coverage: Math.round(coverage * 1000) / 1000 };
        bestPathScore = pathScore;
      }
    }
  }
  return best;
}

/** APPROVE / REVISE / REJECT from a critic's reply; null when it says none of them. */
export function parseCriticReply(reply: string): { verdict: Verdict; reason: string } | null {
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as { verdict?: unknown; reason?: unknown };
      const verdict = typeof parsed.verdict === "string" ? parsed.verdict.trim().toUpperCase() : "";
      if (verdict === "APPROVE" || verdict === "REVISE" || verdict === "REJECT") return { verdict, reason: typeof parsed.reason === "string" ? parsed.reason : "" };
    } catch {
      // not JSON: try the bare word
    }
  }
  const words = ["APPROVE", "REVISE", "REJECT"].filter((w) => new RegExp(`\\b${w}\\b`, "i").test(reply)) as Verdict[];
  return words.length === 1 ? { verdict: words[0]!, reason: reply.trim().slice(0, 300) } : null;
}

const citedRefs = (answer: string, evidence: Evidence[]) => {
  const refs = new Set([...answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
  return evidence.filter((e) => refs.has(e.ref));
};

async function gatherEvidence(db: Db, input: AskInput & { mode: SearchMode; branchContext: BranchContext }, k: number): Promise<{ evidence: Evidence[]; graph: SearchResult["graph"]; noMatch: boolean; notice?: string }> {
  const result = await search(db, {
    workspaceId: input.workspaceId,
    pipelineId: input.pipelineId,
    branch: input.branch,
    branchContext: input.branchContext,
    query: input.question,
    mode: input.mode,
    step: input.step,
    scope: input.scope,
    limit: k,
  });
  const visible = (record: { scope: string }) => maySeeRecord(input.restrictions, record);
  const evidence = await Promise.all(
    result.hits.filter(visible).map(async (hit, i): Promise<Evidence> => {
      // A restricted caller's sources skip those of other scopes (a merge joins copies of many).
      const found = await leaves(db, input.workspaceId, hit.id, { maxCount: input.restrictions ? SOURCES_PER_EVIDENCE * 4 : SOURCES_PER_EVIDENCE });
      const sources = found.leaves.filter(visible).slice(0, SOURCES_PER_EVIDENCE);
      return {
        ref: i + 1,
        id: hit.id,
        step: hit.step,
        scope: hit.scope,
        snippet: hit.snippet,
        content: hit.content.slice(0, EVIDENCE_CHARS),
        time: hitTime(hit.metadata),
        relevance: Math.round(relevance(hit) * 1000) / 1000,
        sources: sources.map((l) => ({ id: l.id, step: l.step, preview: l.content.slice(0, 200) })),
        ...(hit.evidencePaths?.length ? { paths: hit.evidencePaths } : {}),
      };
    }),
  );
  return { evidence, graph: result.graph, noMatch: evidence.length === 0, ...(result.notice ? { notice: result.notice } : {}) };
}

type Picked = ReturnType<typeof extractiveAnswer>;
type Critic = AnswerPacket["critic"];

/** The offline critic without a graph: how much of the question the quoted sentence covers. */
function overlapCritic(picked: Picked): Critic {
  const share = picked?.coverage ?? 0;
  return {
    verdict: share >= 0.5 ? "APPROVE" : share > 0 ? "REVISE" : "REJECT",
    reason: picked ? `The quoted sentence (or the question in the memory it answers) shares ${Math.round(share * 100)}% of the question's words.` : "No evidence sentence shares a word with the question.",
    model: "offline/overlap",
    revised: false,
  };
}

/** The offline critic on the graph: entity coverage of the evidence, then support of the quoted sentence. */
function graphCritic(picked: Picked, coverage: EntityCoverage, evidence: Evidence[]): Critic {
  const list = (xs: string[]) => xs.join(", ");
  const reach = `The evidence reaches ${coverage.reached.length} of the question's ${coverage.entities.length} entities${coverage.reached.length ? ` (${list(coverage.reached)})` : ""}${coverage.missing.length ? `; not reached: ${list(coverage.missing)}` : ""}.`;
  const model = "offline/entity-coverage";
  if (coverage.reached.length === 0) return { verdict: "REJECT", reason: `${reach} Nothing in the memory connects to ${list(coverage.missing)}.`, model, revised: false };
  if (!picked) return { verdict: "REVISE", reason: `${reach} No evidence sentence shares a word with the question.`, model, revised: false };
  const onPath = Boolean(evidence.find((e) => e.ref === picked.ref)?.paths?.length);
  const supported = onPath || picked.coverage >= 0.5;
  const support = onPath ? "The quoted sentence is on a graph path from the question's entities." : `The quoted sentence shares ${Math.round(picked.coverage * 100)}% of the question's words.`;
  return { verdict: coverage.coverage === 1 && supported ? "APPROVE" : "REVISE", reason: `${reach} ${support}`, model, revised: false };
}

function checkModel(what: string, id: string | undefined) {
  if (id === undefined) return;
  const { provider, name } = parseModelId(id);
  if (!id.includes("/") || !provider || !name) throw badRequest(`${what}: "${id}" is not provider/model (e.g. openai/gpt-4o-mini).`);
}

/** Retrieval, an answer, a critic verdict and a confidence; abstains when the evidence is weak. */
export async function ask(db: Db, input: AskInput, model: ModelProvider = workspaceModel(db, input.workspaceId)): Promise<AnswerPacket> {
  const question = input.question.trim();
  if (!question) throw badRequest("question: ask something, e.g. \"what did we decide about the launch?\"");
  const k = Math.min(ASK_MAX_K, Math.max(1, Math.floor(input.k ?? ASK_DEFAULT_K)));
  const minConfidence = input.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
  checkModel("model", input.model);
  checkModel("criticModel", input.criticModel);
  const generative = Boolean(input.model && parseModelId(input.model).provider !== "offline");

  // A pipeline with an entity graph answers from graph retrieval unless the caller picks a mode.
  const branchContext = input.branchContext ?? (await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch));
  const mode: SearchMode = input.mode ?? (hasGraph(branchContext.spec) ? "graph" : "hybrid");
  const { evidence, graph, noMatch, notice } = await gatherEvidence(db, { ...input, question, mode, branchContext }, k);
  const nothing = noMatch && notice ? notice : "No record of this memory matches the question.";
  const conf = confidence(evidence);
  const coverage = graph ? entityCoverage(graph, evidence) : null;
  const usage = { calls: 0, tokensIn: 0, tokensOut: 0, costUsd: 0 };
  const base = { question, evidence, noMatch, confidence: conf, usage, mode, ...(coverage ? { graph: coverage } : {}) };
  const weak = conf.score < minConfidence;
  const abstain = (kind: AnswerPacket["kind"], modelId: string, label: string, critic: AnswerPacket["critic"], reason: string): AnswerPacket => ({
    ...base,
    answer: null,
    abstained: true,
    uncertaintyReason: reason,
    kind,
    model: modelId,
    label,
    citations: [],
    critic,
  });

  if (!generative) {
    const label = "Extractive answer (no model configured): the evidence sentence sharing most words with the question, quoted, not generated.";
    const picked = extractiveAnswer(question, evidence);
    const critic = coverage ? graphCritic(picked, coverage, evidence) : overlapCritic(picked);
    const verdict = critic.verdict;
    if (!evidence.length) return abstain("extractive", EXTRACTIVE_MODEL, label, critic, nothing);
    if (weak) return abstain("extractive", EXTRACTIVE_MODEL, label, critic, `Confidence ${conf.score} is below ${minConfidence}: the evidence is weak.`);
    if (!picked || verdict === "REJECT") return abstain("extractive", EXTRACTIVE_MODEL, label, critic, critic.reason);
    const cited = evidence.find((e) => e.ref === picked.ref)!;
    return {
      ...base,
      answer: `${picked.answer} [${picked.ref}]`,
      abstained: false,
      uncertaintyReason:
        verdict !== "REVISE" ? null : coverage?.missing.length ? `The evidence does not reach ${coverage.missing.join(", ")}.` : "The quoted sentence covers only part of the question.",
      kind: "extractive",
      model: EXTRACTIVE_MODEL,
      label,
      citations: [{ ref: cited.ref, recordId: cited.id, step: cited.step }],
      critic,
    };
  }

  const answerModel = input.model!;
  const criticModel = input.criticModel ?? answerModel;
  const label = `Generated by ${answerModel} from the numbered evidence, checked by ${criticModel}.`;
  const call = async (modelId: string, prompt: string, task: "summarize" | "classify") => {
    const res = await model.complete({ model: modelId, prompt, temperature: 0, task, inputs: evidence.map((e) => ({ id: e.id, content: e.content })), maxOutputTokens: 400 });
    usage.calls += 1;
    usage.tokensIn += res.tokensIn;
    usage.tokensOut += res.tokensOut;
    usage.costUsd += res.costUsd;
    return res.text.trim();
  };
  const notRun = (reason: string) => ({ verdict: "REJECT" as const, reason, model: criticModel, revised: false });
  if (!evidence.length) return abstain("generated", answerModel, label, notRun("No evidence: nothing to answer from."), nothing);
  if (weak) return abstain("generated", answerModel, label, notRun("Not asked: the evidence was too weak to answer from."), `Confidence ${conf.score} is below ${minConfidence}: the evidence is weak.`);

  try {
    let feedback: string | null = null;
    let previous: string | null = null;
    let revised = false;
    for (let attempt = 0; ; attempt++) {
      const answer = await call(answerModel, await liquid.parseAndRender(ANSWER_PROMPT, { evidence, question, feedback, previous }), "summarize");
      if (!answer || /NOT ENOUGH INFORMATION/i.test(answer)) {
        return abstain("generated", answerModel, label, { verdict: "REJECT", reason: "The model found no answer in the evidence.", model: answerModel, revised }, "The model found no answer in the evidence.");
      }
      const reply = await call(criticModel, await liquid.parseAndRender(CRITIC_PROMPT, { evidence, question, answer }), "classify");
      const parsed = parseCriticReply(reply) ?? { verdict: "REVISE" as const, reason: `The critic's reply was not a verdict: ${reply.slice(0, 200)}` };
      const critic = { ...parsed, model: criticModel, revised };
      if (parsed.verdict === "REJECT") return abstain("generated", answerModel, label, critic, `The critic rejected the answer: ${parsed.reason}`);
      if (parsed.verdict === "REVISE" && attempt === 0) {
        feedback = parsed.reason || "Cite only what the excerpts say.";
        previous = answer;
        revised = true;
        continue;
      }
      const cited = citedRefs(answer, evidence);
      return {
        ...base,
        answer,
        abstained: false,
        uncertaintyReason: parsed.verdict === "REVISE" ? `The critic still asks for changes: ${parsed.reason}` : cited.length ? null : "The answer cites no evidence.",
        kind: "generated",
        model: answerModel,
        label,
        citations: cited.map((e) => ({ ref: e.ref, recordId: e.id, step: e.step })),
        critic,
      };
    }
  } catch (err) {
    if (err instanceof ModelError) throw badRequest(`The model could not answer (${answerModel}): ${err.message}`);
    throw err;
  }
}
