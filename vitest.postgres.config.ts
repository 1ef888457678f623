/**
 * The database-backed Vitest files, run a second time against a real PostgreSQL with pgvector
 * (`TEST_DATABASE_URL`; `npm test` does it when that is set, `.ci/run` always). The list is
 * explicit: every file whose tests go through `server/store/test-db.ts` (store, search, engine,
 * importer, service, API, Inngest), plus the tests that only make sense on a server
 * (`*.postgres.test.ts`: the CLI, concurrent migrations, bad URLs, two app servers).
 * Left out: PGlite-only tests (the embedded wire server, the WASM schema engine's migration
 * check) and the LoCoMo dev-split eval (minutes of model-free building; its store path is the
 * same as `server/eval/service.test.ts`). `scripts/database-tests.test.ts` keeps the list whole.
 */
import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config";

/** Files that use `createTestDb` but stay on PGlite only (see above). */
export const pgliteOnlyTests = [
  "server/eval/locomo-dev.test.ts",
  // Upload body parsing, refusals and staging do not depend on the database behind the route.
  "server/http/upload-refusals.test.ts",
  "server/http/upload-staging.test.ts",
];

export const databaseTests = [
  "**/*.postgres.test.ts",
  "components/overview/upload-route.test.ts",
  "inngest/dispatch.test.ts",
  "inngest/eval-function.test.ts",
  "inngest/run-function.test.ts",
  "server/api/access-control.test.ts",
  "server/api/invite-ownership.test.ts",
  "server/api/key-restrictions.test.ts",
  "server/api/run-scope-key.test.ts",
  "server/api/migration.test.ts",
  "server/api/shadow.test.ts",
  "server/compat/compat-query-log.test.ts",
  "server/compat/mem0-derived.test.ts",
  "server/compat/mem0-model.test.ts",
  "server/compat/mem0-project.test.ts",
  "server/compat/mem0.test.ts",
  "server/compat/zep-drop-in.test.ts",
  "server/compat/zep-graph-edges.test.ts",
  "server/compat/zep-model.test.ts",
  "server/compat/zep.test.ts",
  "server/core/process-state.test.ts",
  "server/engine/engine.test.ts",
  "server/engine/split-audit.test.ts",
  "server/engine/steps/consolidate-life.test.ts",
  "server/engine/steps/consolidate.test.ts",
  "server/engine/steps/graph-steps.test.ts",
  "server/engine/steps/step-registry.test.ts",
  "server/eval/compare-views.test.ts",
  "server/eval/eval-recovery.test.ts",
  "server/eval/eval-retry.test.ts",
  "server/eval/leaderboard-rows.test.ts",
  "server/eval/replay-judge.test.ts",
  "server/eval/replay.test.ts",
  "server/eval/replay-latency.test.ts",
  "server/eval/service.test.ts",
  "server/http/csrf.test.ts",
  "server/http/route-limits.test.ts",
  "server/importers/import-file.test.ts",
  "server/importers/import-media.test.ts",
  "server/importers/importers.fuzz.test.ts",
  "server/llm/providers.test.ts",
  "server/search/date-window.test.ts",
  "server/search/graph-search.test.ts",
  "server/search/hnsw-settings.test.ts",
  "server/search/index-window.test.ts",
  "server/search/lexical.test.ts",
  "server/search/neighbourhood.test.ts",
  "server/search/ranking.test.ts",
  "server/search/search.test.ts",
  "server/search/term-stats.test.ts",
  "server/services/ask.test.ts",
  "server/services/audit.test.ts",
  "server/services/branches.test.ts",
  "server/services/cost.test.ts",
  "server/services/documents-template.test.ts",
  "server/services/fault-injection.test.ts",
  "server/services/graph.test.ts",
  "server/services/ingest.test.ts",
  "server/services/local-workspace.test.ts",
  "server/services/media-originals.test.ts",
  "server/services/memories.test.ts",
  "server/services/memory-edit-during-run.test.ts",
  "server/services/memory-templates.test.ts",
  "server/services/outbound-settings.test.ts",
  "server/services/plan-vs-run.test.ts",
  "server/services/provider-check.test.ts",
  "server/services/purge-copies.test.ts",
  "server/services/purge-eval-questions.test.ts",
  "server/services/purge.test.ts",
  "server/services/pyramid.test.ts",
  "server/services/query-log-writer.test.ts",
  "server/services/run-recovery.test.ts",
  "server/services/run-view.test.ts",
  "server/services/sessions.test.ts",
  "server/services/source-inbox.test.ts",
  "server/services/synapse.test.ts",
  "server/services/synapsis-media.test.ts",
  "server/services/templates-run.test.ts",
  "server/services/users.test.ts",
  "server/services/version-history.test.ts",
  "server/services/watch-folder.test.ts",
  "server/store/embedding-store.test.ts",
  "server/store/scope-knn.test.ts",
  "server/store/search-order.test.ts",
];

export default defineConfig({ ...base, test: { ...base.test, include: databaseTests, exclude: configDefaults.exclude } });
