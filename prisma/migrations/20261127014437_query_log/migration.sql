-- CreateTable
CREATE TABLE "QueryLogConfig" (
    "pipelineId" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "retentionDays" INTEGER NOT NULL DEFAULT 30,
    "maxEntries" INTEGER NOT NULL DEFAULT 100000,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "QueryLogConfig_pkey" PRIMARY KEY ("pipelineId")
);

-- CreateTable
CREATE TABLE "QueryLogEntry" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "surface" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "caller" TEXT NOT NULL,
    "scope" TEXT,
    "mode" TEXT,
    "params" JSONB NOT NULL DEFAULT '{}',
    "query" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "versionId" TEXT,
    "hits" JSONB NOT NULL DEFAULT '[]',
    "recordIds" TEXT[],
    "cited" TEXT[],
    "confidence" DOUBLE PRECISION,
    "latencyMs" INTEGER NOT NULL,
    "labelRecordId" TEXT,

    CONSTRAINT "QueryLogEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "QueryLogConfig_workspaceId_idx" ON "QueryLogConfig"("workspaceId");

-- CreateIndex
CREATE INDEX "QueryLogEntry_pipelineId_createdAt_idx" ON "QueryLogEntry"("pipelineId", "createdAt");

-- CreateIndex
CREATE INDEX "QueryLogEntry_workspaceId_idx" ON "QueryLogEntry"("workspaceId");
