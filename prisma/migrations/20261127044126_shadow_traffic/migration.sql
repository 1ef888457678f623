-- CreateTable
CREATE TABLE "ShadowTraffic" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "startsAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "stoppedAt" TIMESTAMP(3),
    "stopReason" TEXT,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "answered" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "dropped" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,

    CONSTRAINT "ShadowTraffic_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ShadowResult" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "shadowId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "scope" TEXT,
    "k" INTEGER NOT NULL,
    "main" JSONB NOT NULL,
    "branch" JSONB NOT NULL,
    "cited" TEXT[],
    "recordIds" TEXT[],
    "error" TEXT,

    CONSTRAINT "ShadowResult_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ShadowTraffic_pipelineId_branch_idx" ON "ShadowTraffic"("pipelineId", "branch");

-- CreateIndex
CREATE INDEX "ShadowTraffic_workspaceId_idx" ON "ShadowTraffic"("workspaceId");

-- CreateIndex
CREATE INDEX "ShadowResult_shadowId_createdAt_idx" ON "ShadowResult"("shadowId", "createdAt");

-- CreateIndex
CREATE INDEX "ShadowResult_workspaceId_idx" ON "ShadowResult"("workspaceId");
