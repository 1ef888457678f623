/**
 * A private, throwaway database in memory (PGlite with pgvector, migrated with the committed
 * migrations): for a command that builds and scores on data it generates itself, such as
 * `synthex eval freshness`, without reading or writing the workspace's database.
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PrismaPGlite } from "pglite-prisma-adapter";
import type { Db } from "../core/db";
import { PrismaClient } from "../generated/prisma/client";
import { applyMigrations, resolveMigrationsDir } from "./migrate";

export interface ScratchDb {
  db: Db;
  close(): Promise<void>;
}

export async function openScratchDb(): Promise<ScratchDb> {
  const pglite = await PGlite.create({ extensions: { vector } });
  await applyMigrations(pglite, resolveMigrationsDir());
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  let closed = false;
  return {
    db,
    async close() {
      if (closed) return;
      closed = true;
      await db.$disconnect();
      await pglite.close();
    },
  };
}
