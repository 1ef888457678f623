/** Inputs and helpers shared by the CLI tests (embedded database and PostgreSQL). */
import { vi } from "vitest";
import { buildCli } from "./main";

/**
 * The CLI program in this process (no tsx or database start per command) on `dataDir`, with
 * console output captured; returns the exit code and output as a spawned command would.
 */
export async function runCliInProcess(dataDir: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  const error = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  const env = { SYNTHEX_DATA_DIR: process.env.SYNTHEX_DATA_DIR, DATABASE_URL: process.env.DATABASE_URL };
  process.env.SYNTHEX_DATA_DIR = dataDir;
  process.env.DATABASE_URL = "";
  process.exitCode = undefined;
  try {
    await buildCli().parseAsync(["node", "synthex", ...args]);
  } finally {
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, out: out.join("\n"), err: err.join("\n") };
}


function node(id: string, parent: string | null, children: string[], role: string | null, text: string | null, time: number) {
  return {
    id,
    parent,
    children,
    message: role
      ? { id, author: { role }, create_time: time, content: { content_type: "text", parts: [text] }, metadata: {}, recipient: "all" }
      : null,
  };
}

/**
 * A small ChatGPT export: one conversation per (month, topic), one of them with a planted phrase;
 * `extra` more generated ones (one a day through 2024) for runs that must take a while.
 */
export function chatgptExport(extra = 0) {
  const topics = [
    ["2024-01-10", "Rust lifetimes", "How do lifetimes work in Rust?", "Lifetimes tell the borrow checker how long references live."],
    ["2024-01-20", "Kayak trip", "I bought a zebra-striped kayak for the lake.", "A zebra-striped kayak sounds fun; remember a life vest."],
    ["2024-02-05", "Sourdough", "My sourdough starter smells like acetone.", "Feed the starter more often to fix the acetone smell."],
  ];
  for (let k = 0; k < extra; k++) {
    const day = new Date(Date.UTC(2024, 0, 1) + (k % 360) * 86_400_000).toISOString().slice(0, 10);
    topics.push([day, `Garden log ${k}`, `Day ${k}: the tomatoes in bed ${k % 7} need water and the basil ${k} is growing.`, `Water bed ${k % 7} in the morning; note ${k} about the basil is saved.`]);
  }
  return chatgptExportOf(topics as Array<[string, string, string, string]>);
}

/** A ChatGPT export of one user question and one answer per conversation: [day, title, question, answer]. */
export function chatgptExportOf(topics: Array<[string, string, string, string]>) {
  return topics.map(([day, title, question, answer], i) => {
    const t = Date.parse(`${day}T12:00:00Z`) / 1000;
    return {
      id: `conv-${i}`,
      title,
      create_time: t,
      update_time: t + 60,
      current_node: `a${i}`,
      mapping: {
        [`root${i}`]: node(`root${i}`, null, [`q${i}`], null, null, t),
        [`q${i}`]: node(`q${i}`, `root${i}`, [`a${i}`], "user", question!, t),
        [`a${i}`]: node(`a${i}`, `q${i}`, [], "assistant", answer!, t + 30),
      },
    };
  });
}
