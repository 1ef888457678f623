import { apiKeyRouter } from "./routers/api-key";
import { inviteRouter, memberRouter } from "./routers/member";
import { pipelineRouter } from "./routers/pipeline";
import { providerRouter } from "./routers/provider";
import { runRouter } from "./routers/run";
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
  run: runRouter,
  provider: providerRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
