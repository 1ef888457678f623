-- AlterTable
ALTER TABLE "Pipeline" ADD COLUMN     "evalOfId" TEXT;

-- CreateTable
CREATE TABLE "EvalDataset" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "benchmark" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "samples" INTEGER NOT NULL,
    "questions" INTEGER NOT NULL,
    "skips" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EvalDataset_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EvalQuestionSet" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "datasetId" TEXT,
    "questions" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EvalQuestionSet_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EvalRun" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT,
    "template" TEXT,
    "branch" TEXT NOT NULL DEFAULT 'main',
    "versionId" TEXT,
    "specHash" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "benchmark" TEXT NOT NULL,
    "evalPipelineId" TEXT NOT NULL,
    "step" TEXT,
    "mode" TEXT NOT NULL,
    "k" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "judge" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL,
    "error" TEXT,
    "cancelRequested" BOOLEAN NOT NULL DEFAULT false,
    "progress" JSONB NOT NULL DEFAULT '{}',
    "questions" INTEGER NOT NULL DEFAULT 0,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "perCategory" JSONB NOT NULL DEFAULT '{}',
    "cost" JSONB NOT NULL DEFAULT '{}',
    "latency" JSONB NOT NULL DEFAULT '{}',
    "skips" JSONB NOT NULL DEFAULT '[]',
    "triggeredBy" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "EvalRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EvalCase" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "evalRunId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "questionId" TEXT NOT NULL,
    "sample" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "gold" TEXT NOT NULL,
    "evidence" JSONB NOT NULL DEFAULT '[]',
    "retrieved" JSONB NOT NULL DEFAULT '[]',
    "answer" TEXT NOT NULL DEFAULT '',
    "scores" JSONB NOT NULL DEFAULT '{}',
    "tokens" INTEGER NOT NULL DEFAULT 0,
    "latencyMs" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "EvalCase_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "EvalDataset_workspaceId_createdAt_idx" ON "EvalDataset"("workspaceId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "EvalDataset_workspaceId_contentHash_key" ON "EvalDataset"("workspaceId", "contentHash");

-- CreateIndex
CREATE UNIQUE INDEX "EvalQuestionSet_workspaceId_name_key" ON "EvalQuestionSet"("workspaceId", "name");

-- CreateIndex
CREATE INDEX "EvalRun_workspaceId_createdAt_idx" ON "EvalRun"("workspaceId", "createdAt");

-- CreateIndex
CREATE INDEX "EvalRun_pipelineId_createdAt_idx" ON "EvalRun"("pipelineId", "createdAt");

-- CreateIndex
CREATE INDEX "EvalCase_workspaceId_idx" ON "EvalCase"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "EvalCase_evalRunId_position_key" ON "EvalCase"("evalRunId", "position");

-- AddForeignKey
ALTER TABLE "EvalCase" ADD CONSTRAINT "EvalCase_evalRunId_fkey" FOREIGN KEY ("evalRunId") REFERENCES "EvalRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;
