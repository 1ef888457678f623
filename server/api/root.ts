import { apiKeyRouter } from "./routers/api-key";
import { auditRouter } from "./routers/audit";
import { branchRouter } from "./routers/branch";
import { evalsRouter } from "./routers/evals";
import { graphRouter } from "./routers/graph";
import { ingestRouter } from "./routers/ingest";
import { logRouter } from "./routers/log";
import { inviteRouter, memberRouter } from "./routers/member";
import { memoryRouter } from "./routers/memory";
import { migrationRouter } from "./routers/migration";
import { pipelineRouter } from "./routers/pipeline";
import { providerRouter } from "./routers/provider";
import { recordRouter } from "./routers/record";
import { runRouter } from "./routers/run";
import { searchRouter } from "./routers/search";
import { shadowRouter } from "./routers/shadow";
import { sourceRouter } from "./routers/source";
import { userRouter } from "./routers/user";
import { workspaceRouter } from "./routers/workspace";
import { createCallerFactory, createTRPCRouter } from "./trpc";

export const appRouter = createTRPCRouter({
  user: userRouter,
  workspace: workspaceRouter,
  member: memberRouter,
  invite: inviteRouter,
  apiKey: apiKeyRouter,
  pipeline: pipelineRouter,
  branch: branchRouter,
  migration: migrationRouter,
  run: runRouter,
  provider: providerRouter,
  search: searchRouter,
  graph: graphRouter,
  record: recordRouter,
  memory: memoryRouter,
  ingest: ingestRouter,
  source: sourceRouter,
  log: logRouter,
  shadow: shadowRouter,
  evals: evalsRouter,
  audit: auditRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
