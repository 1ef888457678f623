/**
 * LoCoMo loader (`locomo10.json` shape, see shared/formats/locomo.md): each `session_<N>` becomes a
 * session (date from `session_<N>_date_time`), each turn keeps its `dia_id`, and a BLIP caption is
 * kept in brackets after the text. Evidence strings are normalized: `"D8:6; D9:17"` is split,
 * `"D:11:26"` is repaired to `D11:26` when that turn exists, `"D"` and ids of turns that do not
 * exist are dropped — every repair and drop is counted in `skips`. A question left without
 * evidence is skipped (counted). Category 5 (adversarial) is kept but scored apart.
 */
import path from "node:path";
import { BenchmarkFileError, type Dataset, type LoadResult, type LoadSkip, type Question, type Sample, type Session } from "./types";
import { MONTH_NAMES } from "../text/months";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);


/** "1:56 pm on 8 May, 2023" → ISO (UTC: the benchmark gives no timezone); null when it does not parse. */
export function parseLocomoDate(label: string): string | null {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(label);
  if (!m) return null;
  const month = MONTH_NAMES.findIndex((name) => name.toLowerCase() === m[5]!.toLowerCase());
  if (month < 0) return null;
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") hour += 12;
  const d = new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * Evidence strings → turn ids that exist in the sample. Splits on `;`, `,` and whitespace; repairs
 * `D:11:26` and zero-padded `D30:05`; drops the rest. Reports each repair and drop.
 */
export function normalizeEvidence(raw: unknown[], turnIds: ReadonlySet<string>, where: string, skips: LoadSkip[]): string[] {
  const out: string[] = [];
  for (const entry of raw) {
    const text = String(entry ?? "");
    const parts = text.split(/[;,\s]+/).filter(Boolean);
    if (parts.length > 1) skips.push({ where, reason: `evidence "${text}" holds ${parts.length} ids in one string; split`, dropped: false });
    for (const part of parts) {
      const m = /^D:?(\d+):(\d+)$/.exec(part);
      const id = m ? `D${Number(m[1])}:${Number(m[2])}` : null;
      if (id && turnIds.has(id)) {
        if (id !== part) skips.push({ where, reason: `evidence "${part}" read as ${id}`, dropped: false });
        if (!out.includes(id)) out.push(id);
      } else {
        skips.push({ where, reason: id ? `evidence "${part}" names no turn of this conversation; dropped` : `evidence "${part}" is not a turn id; dropped`, dropped: true });
      }
    }
  }
  return out;
}

export function sessionOf(turnId: string): string {
  return /^D(\d+):/.exec(turnId)?.[1] ?? turnId.split(":")[0]!;
}

/** Parses LoCoMo JSON text. Throws BenchmarkFileError (with the JSON path) on a malformed file. */
export function parseLocomo(text: string, file = "locomo.json"): LoadResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BenchmarkFileError(`not valid JSON (${(err as Error).message}); is the file truncated?`, file);
  }
  if (!Array.isArray(raw)) throw new BenchmarkFileError(`a LoCoMo file is a JSON array of conversations; found ${raw === null ? "null" : typeof raw}`, file);
  if (raw.length === 0) throw new BenchmarkFileError("the file holds no conversations", file);
  const skips: LoadSkip[] = [];
  const samples: Sample[] = [];
  const questions: Question[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const at = `[${i}]`;
    if (!isObject(item)) throw new BenchmarkFileError(`${at} is not an object`, file);
    const sampleId = item.sample_id;
    if (typeof sampleId !== "string" || !sampleId.trim()) throw new BenchmarkFileError(`${at}.sample_id is missing (a string such as "conv-26")`, file);
    if (seen.has(sampleId)) throw new BenchmarkFileError(`${at}.sample_id "${sampleId}" appears twice`, file);
    seen.add(sampleId);
    const conv = item.conversation;
    if (!isObject(conv)) throw new BenchmarkFileError(`${at}.conversation (${sampleId}) is missing or not an object`, file);
    if (!Array.isArray(item.qa)) throw new BenchmarkFileError(`${at}.qa (${sampleId}) is missing or not a list`, file);

    const sessions: Session[] = [];
    const turnIds = new Set<string>();
    const keys = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => !!m)
      .sort((a, b) => Number(a[1]) - Number(b[1]));
    for (const m of keys) {
      const n = m[1]!;
      const where = `${sampleId} session_${n}`;
      const turns = conv[m[0]];
      if (!Array.isArray(turns)) throw new BenchmarkFileError(`${at}.conversation.session_${n} is not a list of turns`, file);
      const dateLabel = typeof conv[`session_${n}_date_time`] === "string" ? (conv[`session_${n}_date_time`] as string) : "";
      const time = parseLocomoDate(dateLabel);
      if (!time) skips.push({ where, reason: `session date "${dateLabel}" does not parse; kept without a time`, dropped: false });
      const session: Session = { id: String(Number(n)), time, dateLabel: dateLabel || `session ${n}`, turns: [] };
      turns.forEach((t, j) => {
        if (!isObject(t) || typeof t.dia_id !== "string" || typeof t.text !== "string" || typeof t.speaker !== "string") {
          skips.push({ where: `${where} turn ${j + 1}`, reason: "turn without dia_id, speaker or text; dropped", dropped: true });
          return;
        }
        const caption = typeof t.blip_caption === "string" && t.blip_caption.trim() ? ` [${t.blip_caption.trim()}]` : "";
        session.turns.push({ id: t.dia_id, speaker: t.speaker, text: `${t.text}${caption}` });
        turnIds.add(t.dia_id);
      });
      if (session.turns.length) sessions.push(session);
      else skips.push({ where, reason: "session has no turns; dropped", dropped: true });
    }
    if (!sessions.length) throw new BenchmarkFileError(`${at}.conversation (${sampleId}) has no session_<N> with turns`, file);
    const speakers = [conv.speaker_a, conv.speaker_b].filter((s): s is string => typeof s === "string");
    samples.push({ id: sampleId, speakers, sessions });

    item.qa.forEach((q, j) => {
      const where = `${sampleId} qa[${j}]`;
      if (!isObject(q) || typeof q.question !== "string" || !q.question.trim()) {
        skips.push({ where, reason: "question without text; skipped", dropped: true });
        return;
      }
      const category = Number(q.category);
      if (!Number.isInteger(category) || category < 1 || category > 5) {
        skips.push({ where, reason: `category ${JSON.stringify(q.category)} is not 1-5; skipped`, dropped: true });
        return;
      }
      const evidence = normalizeEvidence(Array.isArray(q.evidence) ? q.evidence : [], turnIds, where, skips);
      if (!evidence.length) {
        skips.push({ where, reason: "question has no usable evidence; skipped", dropped: true });
        return;
      }
      const answer = q.answer ?? (category === 5 ? "Not mentioned in the conversation" : "");
      questions.push({
        id: `${sampleId}:q${j + 1}`,
        sample: sampleId,
        question: q.question.trim(),
        answer: String(answer),
        category: String(category),
        evidence,
        evidenceSessions: [...new Set(evidence.map(sessionOf))],
        apart: category === 5,
      });
    });
  });
  const dataset: Dataset = { benchmark: "locomo", name: path.basename(file), samples, questions };
  return { dataset, skips };
}
