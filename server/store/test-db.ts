/**
 * A private database for a Vitest file: in-memory PGlite with pgvector, committed migrations
 * applied, Prisma through pglite-prisma-adapter. Nothing is shared between test files.
 *
 * Cost: PGlite's initdb dominates (~1.5-2 s per fresh instance on 2 cores). The first call in
 * a file pays it once and keeps a snapshot of the migrated data directory in memory; further
 * calls in the same file start from that snapshot (~0.5 s).
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client";
import { applyMigrations, resolveMigrationsDir } from "./migrate";

export interface TestDb {
  db: PrismaClient;
  pglite: PGlite;
  close(): Promise<void>;
}

let snapshot: Promise<Blob> | null = null;

async function freshMigrated(): Promise<PGlite> {
  const pglite = await PGlite.create({ extensions: { vector } });
  await applyMigrations(pglite, resolveMigrationsDir());
  return pglite;
}

export async function createTestDb(): Promise<TestDb> {
  let pglite: PGlite;
  if (!snapshot) {
    pglite = await freshMigrated();
    const dump = pglite.dumpDataDir("none");
    snapshot = dump;
    dump.catch(() => {
      if (snapshot === dump) snapshot = null;
    });
    await dump;
  } else {
    pglite = await PGlite.create({ extensions: { vector }, loadDataDir: await snapshot });
  }
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  let closed = false;
  return {
    db,
    pglite,
    async close() {
      if (closed) return;
      closed = true;
      await db.$disconnect();
      await pglite.close();
    },
  };
}
