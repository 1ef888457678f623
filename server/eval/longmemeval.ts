/**
 * LongMemEval loader (shared/formats/longmemeval.md): every question carries its own haystack, so
 * each question is one sample (scope `longmemeval:<question_id>`) whose sessions are its haystack.
 * Gold turns are the turns marked `has_answer` (the mark never reaches the records); when an
 * evidence session marks none, the whole session is the evidence (counted). `_abs` questions
 * (abstention) are kept but scored apart, as upstream skips them for retrieval metrics.
 */
import { BenchmarkFileError, type Dataset, type LoadResult, type LoadSkip, type Question, type Sample, type Session } from "./types";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** "2023/05/30 (Tue) 23:40" → ISO (UTC: no timezone is given); null when it does not parse. */
export function parseLongMemEvalDate(label: string): string | null {
  const m = /^\s*(\d{4})\/(\d{1,2})\/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$/.exec(label);
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0)));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function parseItems(text: string, file: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[")) {
    try {
      return JSON.parse(text) as unknown[];
    } catch (err) {
      throw new BenchmarkFileError(`not valid JSON (${(err as Error).message}); is the file truncated?`, file);
    }
  }
  // JSONL (accepted upstream for the reference file).
  return trimmed
    .split("\n")
    .filter((l) => l.trim())
    .map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (err) {
        throw new BenchmarkFileError(`line ${i + 1} is not valid JSON (${(err as Error).message}); is the file truncated?`, file);
      }
    });
}

export function parseLongMemEval(text: string, file = "longmemeval.json"): LoadResult {
  const items = parseItems(text, file);
  if (!Array.isArray(items) || items.length === 0) throw new BenchmarkFileError("a LongMemEval file is a JSON array (or JSONL) of questions; found none", file);
  const skips: LoadSkip[] = [];
  const samples: Sample[] = [];
  const questions: Question[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const at = `[${i}]`;
    if (!isObject(item)) throw new BenchmarkFileError(`${at} is not an object`, file);
    const id = item.question_id;
    if (typeof id !== "string" || !id.trim()) throw new BenchmarkFileError(`${at}.question_id is missing`, file);
    if (seen.has(id)) throw new BenchmarkFileError(`${at}.question_id "${id}" appears twice`, file);
    seen.add(id);
    const ids = item.haystack_session_ids;
    const dates = item.haystack_dates;
    const sessionsRaw = item.haystack_sessions;
    if (!Array.isArray(ids) || !Array.isArray(sessionsRaw) || ids.length !== sessionsRaw.length) {
      throw new BenchmarkFileError(`${at} (${id}): haystack_session_ids and haystack_sessions must be parallel lists`, file);
    }
    if (typeof item.question !== "string" || !item.question.trim()) {
      skips.push({ where: id, reason: "question without text; skipped", dropped: true });
      return;
    }
    const sessions: Session[] = [];
    const marked = new Map<string, string[]>();
    sessionsRaw.forEach((turns, s) => {
      const sid = String(ids[s]);
      const dateLabel = Array.isArray(dates) && typeof dates[s] === "string" ? (dates[s] as string) : "";
      if (!Array.isArray(turns)) throw new BenchmarkFileError(`${at}.haystack_sessions[${s}] (${id}) is not a list of turns`, file);
      const session: Session = { id: sid, time: parseLongMemEvalDate(dateLabel), dateLabel: dateLabel || `session ${sid}`, turns: [] };
      turns.forEach((t, j) => {
        if (!isObject(t) || typeof t.content !== "string" || typeof t.role !== "string") {
          skips.push({ where: `${id} ${sid} turn ${j + 1}`, reason: "turn without role or content; dropped", dropped: true });
          return;
        }
        const turnId = `${sid}#${j + 1}`;
        session.turns.push({ id: turnId, speaker: t.role === "user" ? "User" : t.role === "assistant" ? "Assistant" : t.role, text: t.content });
        if (t.has_answer === true) marked.set(sid, [...(marked.get(sid) ?? []), turnId]);
      });
      if (session.turns.length) sessions.push(session);
    });
    if (!sessions.length) throw new BenchmarkFileError(`${at} (${id}) has no session with turns`, file);
    samples.push({ id, speakers: ["User", "Assistant"], sessions });
    const answerSessions = (Array.isArray(item.answer_session_ids) ? item.answer_session_ids : []).map(String).filter((s) => sessions.some((x) => x.id === s));
    const abstention = id.endsWith("_abs");
    if (!answerSessions.length && !abstention) {
      skips.push({ where: id, reason: "no answer_session_ids in its haystack; skipped", dropped: true });
      return;
    }
    const evidence: string[] = [];
    for (const s of answerSessions) {
      const turns = marked.get(s);
      if (turns?.length) evidence.push(...turns);
      else {
        evidence.push(...sessions.find((x) => x.id === s)!.turns.map((t) => t.id));
        skips.push({ where: id, reason: `evidence session ${s} marks no turn with has_answer; the whole session counts`, dropped: false });
      }
    }
    questions.push({
      id,
      sample: id,
      question: item.question.trim(),
      answer: String(item.answer ?? ""),
      category: typeof item.question_type === "string" ? item.question_type : "unknown",
      evidence,
      evidenceSessions: answerSessions,
      apart: abstention,
      ...(typeof item.question_date === "string" && parseLongMemEvalDate(item.question_date) ? { askedAt: parseLongMemEvalDate(item.question_date)! } : {}),
    });
  });
  const dataset: Dataset = { benchmark: "longmemeval", name: file.split("/").pop() ?? file, samples, questions };
  return { dataset, skips };
}
