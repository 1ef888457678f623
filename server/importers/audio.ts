/**
 * Audio memos (WAV, MP3, M4A) → one item per recording: the transcript with timed segments
 * (`metadata.transcript.segments`, seconds) through the workspace's OpenAI-compatible provider
 * (`opts.transcribe`). Without a provider the recording becomes a record that says it awaits
 * transcription (`transcript.status: "awaiting"`); a later import with a provider replaces it
 * (same file key, new content) — never a silent empty record.
 */
import { open } from "node:fs/promises";
import { checkFile, displayName, fileSha256, mediaLimits, mediaMetadata } from "./media";
import { ImportError, type ImportEvent, type ImporterOptions, type TranscriptSegment } from "./types";

const MIME: Record<string, string> = { ".wav": "audio/wav", ".mp3": "audio/mpeg", ".m4a": "audio/mp4" };
/** WAV codecs a transcription service takes: PCM, IEEE float, A-law, µ-law, and the extensible wrapper. */
const WAV_CODECS = new Set([1, 3, 6, 7, 0xfffe]);

/** A WAV file's codec and duration from its header; throws naming the file when the header is not one. */
export async function wavInfo(file: string, name: string): Promise<{ codec: number; seconds: number }> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const b = buf.subarray(0, bytesRead);
    if (b.toString("latin1", 0, 4) !== "RIFF" || b.toString("latin1", 8, 12) !== "WAVE") throw new ImportError(`${name} is not a WAV file (no RIFF/WAVE header).`, file);
    let off = 12;
    let codec = -1;
    let byteRate = 0;
    while (off + 8 <= b.length) {
      const id = b.toString("latin1", off, off + 4);
      const size = b.readUInt32LE(off + 4);
      if (id === "fmt " && off + 16 <= b.length) {
        codec = b.readUInt16LE(off + 8);
        byteRate = b.readUInt32LE(off + 16);
      }
      if (id === "data") {
        if (codec < 0) break;
        return { codec, seconds: byteRate ? size / byteRate : 0 };
      }
      off += 8 + size + (size % 2);
    }
    throw new ImportError(`${name} is a damaged WAV file (no ${codec < 0 ? "fmt" : "data"} chunk in its header).`, file);
  } finally {
    await fh.close();
  }
}

const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;

export async function* importAudio(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const limits = mediaLimits(opts.limits);
  const bytes = await checkFile(file, limits);
  const name = displayName(file, opts);
  const ext = (/\.[^.]+$/.exec(name)?.[0] ?? ".wav").toLowerCase();
  const mime = MIME[ext] ?? "audio/mpeg";
  let seconds: number | null = null;
  if (ext === ".wav") {
    const info = await wavInfo(file, name);
    if (!WAV_CODECS.has(info.codec)) throw new ImportError(`${name} uses WAV codec 0x${info.codec.toString(16)}, which is not one a transcription service reads (PCM, float, A-law, µ-law); convert it first.`, file);
    seconds = info.seconds;
    if (seconds > limits.maxAudioSeconds) throw new ImportError(`${name} is ${clock(seconds)} long, over the ${clock(limits.maxAudioSeconds)} limit (SYNTHEX_IMPORT_MAX_AUDIO_SECONDS).`, file);
  }
  const sha256 = await fileSha256(file);
  const title = name.replace(/\.[^.]+$/, "");
  let content: string;
  let transcript: Record<string, unknown>;
  let end = seconds ?? 0;
  let res: Awaited<ReturnType<NonNullable<ImporterOptions["transcribe"]>>> = null;
  try {
    res = opts.transcribe ? await opts.transcribe({ file, name, mime }) : null;
  } catch (err) {
    throw new ImportError(`${name}: transcription failed (${(err as Error).message}).`, file);
  }
  if (res) {
    const duration = res.duration ?? res.segments.at(-1)?.end ?? seconds ?? 0;
    if (duration > limits.maxAudioSeconds) throw new ImportError(`${name} is ${clock(duration)} long, over the ${clock(limits.maxAudioSeconds)} limit (SYNTHEX_IMPORT_MAX_AUDIO_SECONDS).`, file);
    end = duration;
    const segments: TranscriptSegment[] = res.segments.length ? res.segments : [{ start: 0, end: duration, text: res.text }];
    content = segments.map((s) => `[${clock(s.start)}–${clock(s.end)}] ${s.text.trim()}`).join("\n");
    if (!res.text.trim() && !segments.some((s) => s.text.trim())) content = `[${name}: a ${clock(duration)} recording in which the transcription found no speech.]`;
    transcript = { status: "done", model: res.model, segments };
  } else {
    content = `[${name}: an audio memo${seconds !== null ? ` of ${clock(seconds)}` : ""} that awaits transcription — no transcription provider is set for this workspace. Import it again once one is (an OpenAI-compatible provider in Settings).]`;
    transcript = { status: "awaiting" };
    yield { warning: { conversation: name, reason: "no transcription provider: stored as a record that awaits transcription" } };
  }
  yield {
    item: {
      externalId: opts.fileKey ?? name,
      content,
      metadata: mediaMetadata({
        format: "audio",
        file: { name, sha256, bytes, type: mime },
        position: { start_s: 0, end_s: Math.round(end * 100) / 100 },
        path: opts.displayPath ?? file,
        title,
        extra: { audio: { seconds }, transcript },
      }),
    },
  };
}
