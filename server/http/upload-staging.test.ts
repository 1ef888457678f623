/**
 * Where an upload is written before it is imported: a private folder (mode 0700, owned by the
 * server user) outside every inbox root. Before the fix the route wrote it under the server's temp
 * folder — the default inbox root — so a workspace whose inbox was the temp folder imported another
 * workspace's upload. The route is called as Next calls it, with a real file and real folders.
 */
import { lstat, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TestDb } from "@/server/store/test-db";

const session = vi.hoisted(() => ({ user: null as { userId: string; email: string } | null, db: null as unknown }));
const seen = vi.hoisted(() => ({ staged: [] as { file: string; dirMode: number; parentMode: number; parent: string; uid: number }[] }));
vi.mock("@/server/auth/session", () => ({ getSessionUser: async () => session.user }));
vi.mock("@/server/store/db", () => ({ getDb: async () => session.db }));
vi.mock("@/server/services/imports", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/server/services/imports")>();
  return {
    ...real,
    // Looks at the staged file while the import runs (it is removed afterwards), then imports it for real.
    importFile: async (...args: Parameters<typeof real.importFile>) => {
      const file = await realpath(args[1].path);
      const dir = path.dirname(file);
      const info = await lstat(dir);
      seen.staged.push({ file, dirMode: info.mode & 0o777, parentMode: (await stat(path.dirname(dir))).mode & 0o777, parent: path.dirname(dir), uid: info.uid });
      return real.importFile(...args);
    },
  };
});

const { createTestDb } = await import("@/server/store/test-db");
const { signUp } = await import("@/server/services/users");
const { createPipeline } = await import("@/server/services/pipelines");
const { templateSpec } = await import("@/server/pipeline/templates");
const { isWithin } = await import("@/server/services/inbox-roots");
const uploadRoute = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");

const fixture = readFileSync(path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json"));
const saved = { roots: process.env.SYNTHEX_INBOX_ROOTS, staging: process.env.SYNTHEX_STAGING_DIR };

describe("upload staging", () => {
  let t: TestDb;
  let pipelineId: string;
  let owner: { userId: string; email: string };
  let secondRoot: string;

  beforeAll(async () => {
    t = await createTestDb();
    session.db = t.db;
    const { user, workspace } = await signUp(t.db as never, { email: "stager@example.com", password: "a-long-password-1" } as never);
    owner = { userId: user.id, email: user.email };
    const created = await createPipeline(t.db as never, workspace.id, { name: "staged", spec: templateSpec("chat-memory") } as never);
    pipelineId = created.pipeline.id;
    secondRoot = await realpath(await mkdtemp(path.join(tmpdir(), "synthex-staging-root-")));
  }, 60_000);
  afterAll(async () => {
    for (const [key, value] of [["SYNTHEX_INBOX_ROOTS", saved.roots], ["SYNTHEX_STAGING_DIR", saved.staging]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await t?.close();
    await rm(secondRoot, { recursive: true, force: true });
  });

  it("an upload is staged in a private folder (0700, the server user's) outside every inbox root — even when the temp folder is a root — and removed after", async () => {
    // The temp folder (the old default root) is a root, and a staging folder inside a root is asked for: both avoided.
    const tmpReal = await realpath(tmpdir());
    process.env.SYNTHEX_INBOX_ROOTS = [tmpReal, secondRoot].join(path.delimiter);
    process.env.SYNTHEX_STAGING_DIR = path.join(secondRoot, "staging-inside-a-root");
    session.user = owner;
    const form = new FormData();
    form.set("file", new Blob([fixture]), "conversations.json");
    const res = await uploadRoute.POST(new Request(`http://localhost/api/v1/pipelines/${pipelineId}/sources/chats/upload`, { method: "POST", body: form }), {
      params: Promise.resolve({ pipelineId, source: "chats" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ fileName: "conversations.json", added: 5 });
    expect(seen.staged).toHaveLength(1);
    const [staged] = seen.staged;
    expect(path.basename(staged!.file)).toBe("conversations.json");
    for (const root of [tmpReal, secondRoot]) expect(isWithin(root, staged!.file), `${staged!.file} is under the root ${root}`).toBe(false);
    expect(staged!.dirMode).toBe(0o700);
    expect(staged!.parentMode).toBe(0o700);
    if (typeof process.getuid === "function") expect(staged!.uid).toBe(process.getuid());
    // Gone after the import: nothing of the upload is left in the staging folder.
    expect((await readdir(staged!.parent)).filter((name) => path.join(staged!.parent, name) === path.dirname(staged!.file))).toEqual([]);
  }, 60_000);
});
