import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectManualObjects, filterGeneratedSql, manualStatements } from "./manual-sql";
import { applyMigrations, migrationChecksum, readMigrations } from "./migrate";
import {
  createSchemaEngine,
  diffDatabaseToSchema,
  diffMigrationsToSchema,
  migrationList,
  openVectorPGlite,
  readSchemaFiles,
  type SchemaEngine,
} from "./schema-engine";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MIGRATIONS = path.join(ROOT, "prisma/migrations");
const SCHEMA = path.join(ROOT, "prisma/schema.prisma");
const NO_FILTER = { externalTables: [], externalEnums: [] };

describe("committed migrations", () => {
  let pglite: PGlite;
  let engine: SchemaEngine;
  let tmp: string;
  const files = readSchemaFiles(SCHEMA);
  const migrations = readMigrations(MIGRATIONS);

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), "synthex-migrations-"));
    pglite = await openVectorPGlite();
    const result = await applyMigrations(pglite, MIGRATIONS);
    expect(result.applied).toEqual(migrations.map((m) => m.name));
    engine = await createSchemaEngine(pglite, files);
  });
  afterAll(async () => {
    engine?.free();
    await pglite?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("exist, and the first one creates the vector extension first", () => {
    expect(migrations.length).toBeGreaterThan(0);
    expect(migrations[0].sql.startsWith("CREATE EXTENSION IF NOT EXISTS vector;")).toBe(true);
  });

  it("produce exactly prisma/schema.prisma (schema engine diff from the migrated database is empty)", async () => {
    const raw = await diffDatabaseToSchema(engine, files);
    const drift = filterGeneratedSql(raw, collectManualObjects(migrations));
    expect(drift, `the database built by the migrations differs from schema.prisma:\n${raw}`).toBe("");
  });

  it("are recorded in _prisma_migrations exactly as prisma migrate deploy would", async () => {
    const { rows } = await pglite.query<Record<string, unknown>>(`SELECT * FROM "_prisma_migrations" ORDER BY migration_name`);
    expect(rows.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [i, row] of rows.entries()) {
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.checksum).toBe(migrationChecksum(readFileSync(path.join(MIGRATIONS, migrations[i].name, "migration.sql"))));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.started_at).toBeInstanceOf(Date);
      expect(row.logs).toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    // Prisma's own engine agrees: nothing edited, failed or pending, and deploy has nothing to do.
    const diagnosis = await engine.diagnoseMigrationHistory({
      migrationsList: migrationList(MIGRATIONS),
      optInToShadowDatabase: false,
      filters: NO_FILTER,
    });
    expect(diagnosis).toMatchObject({ history: null, editedMigrationNames: [], failedMigrationNames: [], hasMigrationsTable: true });
    const deploy = await engine.applyMigrations({ migrationsList: migrationList(MIGRATIONS), filters: NO_FILTER });
    expect(deploy.appliedMigrationNames).toEqual([]);
  });

  it("re-applying is a no-op", async () => {
    const before = await pglite.query<Record<string, unknown>>(`SELECT id, finished_at FROM "_prisma_migrations" ORDER BY id`);
    const result = await applyMigrations(pglite, MIGRATIONS);
    expect(result).toEqual({ applied: [], alreadyApplied: migrations.map((m) => m.name) });
    const after = await pglite.query<Record<string, unknown>>(`SELECT id, finished_at FROM "_prisma_migrations" ORDER BY id`);
    expect(after.rows).toEqual(before.rows);
  });

  it("an up-to-date database is answered by two reads (no migration lock, no transaction per migration)", async () => {
    const sent: string[] = [];
    const counting = {
      query: (sql: string, params?: unknown[]) => (sent.push(sql), pglite.query(sql, params)),
      exec: (sql: string) => (sent.push(sql), pglite.exec(sql)),
      transaction: pglite.transaction.bind(pglite),
    };
    const result = await applyMigrations(counting, MIGRATIONS);
    expect(result).toEqual({ applied: [], alreadyApplied: migrations.map((m) => m.name) });
    expect(sent).toHaveLength(2);
    expect(sent.join("\n")).not.toMatch(/advisory|BEGIN/);

    // One pending migration: the full path runs (under the lock) and applies it.
    const dir = path.join(tmp, "one-more");
    cpSync(MIGRATIONS, dir, { recursive: true });
    mkdirSync(path.join(dir, "99999999999998_more"));
    writeFileSync(path.join(dir, "99999999999998_more", "migration.sql"), `CREATE TABLE "OneMore" (id int);`);
    sent.length = 0;
    expect((await applyMigrations(counting, dir)).applied).toEqual(["99999999999998_more"]);
    expect(sent.join("\n")).toMatch(/pg_advisory_lock/);
    await pglite.exec(`DROP TABLE "OneMore"; DELETE FROM "_prisma_migrations" WHERE migration_name = '99999999999998_more'`);
  });

  it("a failed migration in the history is refused even when every file is applied", async () => {
    await pglite.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ('failed-row', 'x', 'old_failed', now())`);
    try {
      await expect(applyMigrations(pglite, MIGRATIONS)).rejects.toThrow(/failed migrations \(old_failed\)/);
    } finally {
      await pglite.query(`DELETE FROM "_prisma_migrations" WHERE id = 'failed-row'`);
    }
  });

  it("refuses to run when an applied migration's file changed", async () => {
    const dir = path.join(tmp, "tampered");
    cpSync(MIGRATIONS, dir, { recursive: true });
    const pending = path.join(dir, "99999999999999_pending");
    mkdirSync(pending);
    writeFileSync(path.join(pending, "migration.sql"), `CREATE TABLE "ShouldNotExist" (id int);`);
    const first = path.join(dir, migrations[0].name, "migration.sql");
    writeFileSync(first, `${readFileSync(first, "utf8")}\n-- edited after being applied\n`);
    await expect(applyMigrations(pglite, dir)).rejects.toThrow(/modified after it was applied/);
    const { rows } = await pglite.query<Record<string, unknown>>(`SELECT to_regclass('"ShouldNotExist"') AS t`);
    expect(rows[0].t).toBeNull(); // refused before applying anything
  });

  it("a failing migration is rolled back and not recorded", async () => {
    const dir = path.join(tmp, "failing");
    cpSync(MIGRATIONS, dir, { recursive: true });
    const bad = path.join(dir, "99999999999999_bad");
    mkdirSync(bad);
    writeFileSync(path.join(bad, "migration.sql"), `CREATE TABLE "Half" (id int);\nSELECT no_such_function();\n`);
    await expect(applyMigrations(pglite, dir)).rejects.toThrow(/99999999999999_bad failed/);
    const { rows } = await pglite.query<Record<string, unknown>>(
      `SELECT to_regclass('"Half"') AS t, (SELECT count(*)::int FROM "_prisma_migrations" WHERE migration_name = '99999999999999_bad') AS n`,
    );
    expect(rows[0]).toEqual({ t: null, n: 0 });
  });

  it("embedding_scope copies each record's pipeline, step and scope into its embeddings, and drops the vector indexes first", async () => {
    const scopeMigration = "20261125182442_embedding_scope";
    const before = path.join(tmp, "before-embedding-scope");
    mkdirSync(before);
    for (const m of migrations.filter((x) => x.name < scopeMigration)) cpSync(path.join(MIGRATIONS, m.name), path.join(before, m.name), { recursive: true });
    const db = await openVectorPGlite();
    try {
      await applyMigrations(db, before);
      await db.exec(`
        INSERT INTO "Record" (id, "workspaceId", "pipelineId", step, "stepVersionHash", "workKey", "materializationKey", "contentFingerprint", content, scope)
        VALUES ('r1', 'w1', 'p1', 'notes', 'h', 'k1', 'k1', 'f1', 'one', 'user:ana'), ('r2', 'w1', 'p1', 'summaries', 'h', 'k2', 'k2', 'f2', 'two', '');
        INSERT INTO "Embedding" ("workspaceId", "recordId", model, dimensions, vector)
        VALUES ('w1', 'r1', 'm', 3, '[1,0,0]'), ('w1', 'r2', 'm', 3, '[0,1,0]');
        CREATE INDEX "Embedding_hnsw_m_3_test" ON "Embedding" USING hnsw ((vector::vector(3)) vector_cosine_ops) WHERE model = 'm';`);
      const result = await applyMigrations(db, MIGRATIONS);
      expect(result.applied).toContain(scopeMigration);
      const { rows } = await db.query(`SELECT "recordId", "pipelineId", step, scope FROM "Embedding" ORDER BY "recordId"`);
      expect(rows).toEqual([
        { recordId: "r1", pipelineId: "p1", step: "notes", scope: "user:ana" },
        { recordId: "r2", pipelineId: "p1", step: "summaries", scope: "" },
      ]);
      const indexes = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'Embedding' ORDER BY 1`);
      expect(indexes.rows.map((r) => r.indexname)).toEqual(["Embedding_pkey", "Embedding_scope_idx", "Embedding_workspaceId_model_idx"]);
    } finally {
      await db.close();
    }
  });

  it("api_keys_belong_to_members gives keys made with a key to that key's member, and revokes keys whose creator left", async () => {
    const ownerMigration = "20261126220351_api_keys_belong_to_members";
    const before = path.join(tmp, "before-key-owners");
    mkdirSync(before);
    for (const m of migrations.filter((x) => x.name < ownerMigration)) cpSync(path.join(MIGRATIONS, m.name), path.join(before, m.name), { recursive: true });
    const db = await openVectorPGlite();
    try {
      await applyMigrations(db, before);
      await db.exec(`
        INSERT INTO "User" (id, email) VALUES ('ana', 'ana@example.com'), ('bo', 'bo@example.com');
        INSERT INTO "Workspace" (id, name, slug) VALUES ('w1', 'W', 'w');
        INSERT INTO "Membership" (id, "workspaceId", "userId", role) VALUES ('m1', 'w1', 'ana', 'admin');
        INSERT INTO "ApiKey" (id, "workspaceId", name, prefix, "keyHash", role, "createdById") VALUES
          ('k1', 'w1', 'ana', 'sx_1', 'h1', 'admin', 'ana'),
          ('k2', 'w1', 'made by k1', 'sx_2', 'h2', 'editor', 'apikey:k1'),
          ('k3', 'w1', 'made by k2', 'sx_3', 'h3', 'viewer', 'apikey:k2'),
          ('k4', 'w1', 'bo left', 'sx_4', 'h4', 'admin', 'bo'),
          ('k5', 'w1', 'made by bo''s key', 'sx_5', 'h5', 'viewer', 'apikey:k4');`);
      expect((await applyMigrations(db, MIGRATIONS)).applied).toEqual([ownerMigration, ...migrations.filter((x) => x.name > ownerMigration).map((x) => x.name)]);
      const { rows } = await db.query(`SELECT id, "createdById", "revokedAt" IS NOT NULL AS revoked FROM "ApiKey" ORDER BY id`);
      expect(rows).toEqual([
        { id: "k1", createdById: "ana", revoked: false },
        { id: "k2", createdById: "ana", revoked: false },
        { id: "k3", createdById: "ana", revoked: false },
        { id: "k4", createdById: "bo", revoked: true },
        { id: "k5", createdById: "bo", revoked: true },
      ]);
    } finally {
      await db.close();
    }
  });

  it("hand-written SQL in manual blocks (HNSW, generated tsvector) is kept out of generated diffs", async () => {
    const dir = path.join(tmp, "manual");
    cpSync(MIGRATIONS, dir, { recursive: true });
    const manualDir = path.join(dir, "99999999999999_search");
    mkdirSync(manualDir);
    const manualSql = [
      "-- synthex:manual begin",
      `ALTER TABLE "Record" ADD COLUMN "embedding" vector(3),`,
      `  ADD COLUMN "search" tsvector GENERATED ALWAYS AS (to_tsvector('english', "content")) STORED;`,
      `CREATE INDEX "Record_embedding_hnsw" ON "Record" USING hnsw ("embedding" vector_cosine_ops);`,
      `CREATE INDEX "Record_search_idx" ON "Record" USING gin ("search");`,
      "-- synthex:manual end",
      "",
    ].join("\n");
    writeFileSync(path.join(manualDir, "migration.sql"), manualSql);
    expect(manualStatements(manualSql)).toHaveLength(3);

    const result = await applyMigrations(pglite, dir);
    expect(result.applied).toEqual(["99999999999999_search"]);
    const manual = collectManualObjects(readMigrations(dir));
    expect([...manual.indexes]).toEqual(expect.arrayContaining(["Record_embedding_hnsw", "Record_search_idx"]));
    expect([...manual.columns]).toEqual(expect.arrayContaining(["Record.embedding", "Record.search"]));

    // Unfiltered, Prisma wants to drop what it does not know ...
    const raw = await diffDatabaseToSchema(engine, files);
    expect(raw).toContain(`DROP INDEX "Record_embedding_hnsw"`);
    expect(raw).toContain(`DROP COLUMN "search"`);
    // ... filtered, there is no drift: neither from the database nor along the db:diff path
    // (migrations replayed into a shadow PGlite that has pgvector).
    expect(filterGeneratedSql(raw, manual)).toBe("");
    expect(filterGeneratedSql(await diffMigrationsToSchema(engine, dir, files), manual)).toBe("");
  });
});

describe("filterGeneratedSql", () => {
  const manual = collectManualObjects([
    {
      sql: `-- synthex:manual\nCREATE INDEX IF NOT EXISTS doc_vec ON "Doc" USING hnsw (v vector_l2_ops);\nCREATE TABLE "Other" (id int);\n`,
    },
  ]);

  it("keeps other statements and other clauses of the same ALTER TABLE", () => {
    const generated = [
      "/*",
      "  Warnings:",
      "",
      "  - You are about to drop the column `x` on the `Doc` table. All the data in the column will be lost.",
      "",
      "*/",
      "-- DropIndex",
      `DROP INDEX "doc_vec";`,
      "",
      "-- AlterTable",
      `ALTER TABLE "Doc" DROP COLUMN "x",`,
      `ADD COLUMN "y" TEXT NOT NULL DEFAULT 'a;b';`,
      "",
    ].join("\n");
    const out = filterGeneratedSql(generated, manual);
    expect(out).not.toContain("doc_vec");
    expect(out).toContain(`ALTER TABLE "Doc" DROP COLUMN "x",\nADD COLUMN "y" TEXT NOT NULL DEFAULT 'a;b';`);
    expect(out).toContain("Warnings:");
    expect(manual.tables.size).toBe(0); // only the statement after the single-line marker is manual
  });

  it("treats Prisma's empty migration as no changes", () => {
    expect(filterGeneratedSql("-- This is an empty migration.\n", manual)).toBe("");
    expect(filterGeneratedSql(`-- DropIndex\nDROP INDEX "doc_vec";\n`, manual)).toBe("");
  });
});
