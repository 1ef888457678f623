/**
 * The setup every eval test starts from: a private PGlite database, a signed-up owner and the
 * benchmark file imported once (the tiny LoCoMo fixture unless a file's text is given), plus a
 * tRPC caller acting as that owner.
 */
import { createCaller } from "../../api/root";
import { createContext } from "../../api/trpc";
import type { Db } from "../../core/db";
import { signUp } from "../../services/users";
import { createTestDb } from "../../store/test-db";
import { importDataset } from "../dataset-store";
import { locomoFixture } from "./locomo-fixture";

export interface EvalWorkspace {
  db: Db;
  close: () => Promise<void>;
  workspaceId: string;
  userId: string;
  email: string;
  datasetId: string;
  /** The imported file's text. */
  text: string;
  /** tRPC as the owner (or as another signed-up user). */
  caller: (as?: { userId: string; email: string }) => Promise<ReturnType<typeof createCaller>>;
}

export async function evalWorkspace(email: string, data: { text?: string; name?: string } = {}): Promise<EvalWorkspace> {
  const { db, close } = await createTestDb();
  const { workspace, user } = await signUp(db, { email, password: "correct-horse-battery" });
  const text = data.text ?? JSON.stringify(locomoFixture());
  const dataset = await importDataset(db, workspace.id, { benchmark: "locomo", text, name: data.name ?? "tiny-locomo.json" });
  return {
    db,
    close,
    workspaceId: workspace.id,
    userId: user.id,
    email,
    datasetId: dataset.id,
    text,
    caller: async (as = { userId: user.id, email }) => createCaller(await createContext({ db, session: as })),
  };
}
