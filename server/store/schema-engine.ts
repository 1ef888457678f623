/**
 * Prisma's WebAssembly schema engine driven against in-memory PGlite (the native engine cannot
 * be downloaded offline). Development and test tooling only: db:diff and the migration drift
 * test. The app never imports this (it pulls devDependencies and a 5 MB WASM module).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import type { MigrationList, SchemaEngine as WasmSchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { readMigrations } from "./migrate";

export type SchemaEngine = WasmSchemaEngine;

const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

type WasmGlue = typeof import("@prisma/schema-engine-wasm");
let glue: Promise<WasmGlue> | null = null;

/** The package's entry imports the .wasm as an ES module (not supported by Node): instantiate it by hand. */
function loadGlue(): Promise<WasmGlue> {
  glue ??= (async () => {
    const bg = (await import("@prisma/schema-engine-wasm/schema_engine_bg")) as unknown as WasmGlue & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const require = createRequire(import.meta.url);
    const pkgDir = path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bytes = readFileSync(path.join(pkgDir, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg as unknown as WebAssembly.ModuleImports });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return glue;
}

/** Opens an in-memory PGlite with pgvector loaded (what our migrations need). */
export function openVectorPGlite(): Promise<PGlite> {
  return PGlite.create({ extensions: { vector } });
}

/**
 * pglite-prisma-adapter 0.7.2 does not await `executeScript` (errors become unhandled
 * rejections and the engine goes on) and its shadow database lacks pgvector. This factory
 * fixes both: scripts are awaited and errors reported, and each shadow database is a fresh
 * in-memory PGlite with the vector extension, closed when the engine disposes it.
 */
export class VectorPGliteFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = "postgres" as const;
  readonly adapterName = "pglite-synthex";
  constructor(private readonly main: PGlite) {}

  connect(): Promise<SqlDriverAdapter> {
    return adapterFor(this.main, false);
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    return adapterFor(await openVectorPGlite(), true);
  }
}

async function adapterFor(db: PGlite, closeOnDispose: boolean): Promise<SqlDriverAdapter> {
  const adapter = (await new PrismaPGlite(db).connect()) as SqlDriverAdapter & { onError(e: unknown): never };
  adapter.executeScript = async (script: string) => {
    try {
      await db.exec(script);
    } catch (err) {
      adapter.onError(err);
    }
  };
  if (closeOnDispose) adapter.dispose = async () => void (await db.close());
  return adapter;
}

/** A schema engine whose main database is `db` and whose shadow databases are fresh vector PGlites. */
export async function createSchemaEngine(
  db: PGlite,
  schemaFiles: Array<{ path: string; content: string }>,
  log: (line: string) => void = () => {},
): Promise<SchemaEngine> {
  const { SchemaEngine } = await loadGlue();
  return SchemaEngine.new(
    { datamodels: schemaFiles.map((f) => [f.path, f.content] as [string, string]) },
    log,
    bindMigrationAwareSqlAdapterFactory(new VectorPGliteFactory(db)),
  );
}

export function readSchemaFiles(schemaPath = "prisma/schema.prisma"): Array<{ path: string; content: string }> {
  const file = path.resolve(schemaPath);
  return [{ path: file, content: readFileSync(file, "utf8") }];
}

/** The migrations directory in the engine's format (like the Prisma CLI builds it). */
export function migrationList(migrationsDir = "prisma/migrations"): MigrationList {
  const baseDir = path.resolve(migrationsDir);
  let lock: string | null = null;
  try {
    lock = readFileSync(path.join(baseDir, "migration_lock.toml"), "utf8");
  } catch {}
  let migrations: ReturnType<typeof readMigrations> = [];
  try {
    migrations = readMigrations(baseDir);
  } catch {}
  return {
    baseDir,
    lockfile: { path: "migration_lock.toml", content: lock },
    shadowDbInitScript: "",
    migrationDirectories: migrations.map((m) => ({
      path: m.name,
      migrationFile: { path: "migration.sql", content: { tag: "ok", value: m.sql } },
    })),
  };
}

/** SQL that takes the state produced by the committed migrations to the schema (unfiltered). */
export async function diffMigrationsToSchema(
  engine: SchemaEngine,
  migrationsDir: string,
  schemaFiles: Array<{ path: string; content: string }>,
): Promise<string> {
  const result = await engine.diff({
    from: { tag: "migrations", ...migrationList(migrationsDir) },
    to: { tag: "schemaDatamodel", files: schemaFiles },
    script: true,
    exitCode: null,
    filters: NO_FILTER,
  });
  return result.stdout ?? "";
}

/** SQL that takes the engine's main database (as it is now) to the schema (unfiltered). */
export async function diffDatabaseToSchema(
  engine: SchemaEngine,
  schemaFiles: Array<{ path: string; content: string }>,
): Promise<string> {
  const result = await engine.diff({
    from: { tag: "schemaDatasource", files: schemaFiles, configDir: process.cwd() },
    to: { tag: "schemaDatamodel", files: schemaFiles },
    script: true,
    exitCode: null,
    filters: NO_FILTER,
  });
  return result.stdout ?? "";
}
