-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "webhookSecret" TEXT;

-- CreateTable
CREATE TABLE "ProviderCredential" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "baseUrl" TEXT,
    "encryptedKey" TEXT,
    "keyPreview" TEXT,
    "maxConcurrency" INTEGER NOT NULL DEFAULT 8,
    "requestsPerMinute" INTEGER,
    "timeoutMs" INTEGER NOT NULL DEFAULT 60000,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ProviderCredential_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelPrice" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "inputPerMillion" DOUBLE PRECISION NOT NULL,
    "outputPerMillion" DOUBLE PRECISION NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelPrice_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Embedding" (
    "workspaceId" TEXT NOT NULL,
    "recordId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" vector NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Embedding_pkey" PRIMARY KEY ("recordId","model")
);

-- CreateTable
CREATE TABLE "SourceImport" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "fileName" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "stats" JSONB NOT NULL DEFAULT '{}',
    "warnings" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "SourceImport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProjectionState" (
    "workspaceId" TEXT NOT NULL,
    "branchId" TEXT NOT NULL,
    "output" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "recordId" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ProjectionState_pkey" PRIMARY KEY ("branchId","output","scope")
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "output" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "responseStatus" INTEGER,
    "lastError" TEXT,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ProviderCredential_workspaceId_name_key" ON "ProviderCredential"("workspaceId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "ModelPrice_workspaceId_model_key" ON "ModelPrice"("workspaceId", "model");

-- CreateIndex
CREATE INDEX "Embedding_workspaceId_model_idx" ON "Embedding"("workspaceId", "model");

-- CreateIndex
CREATE INDEX "SourceImport_pipelineId_createdAt_idx" ON "SourceImport"("pipelineId", "createdAt");

-- CreateIndex
CREATE INDEX "SourceImport_workspaceId_idx" ON "SourceImport"("workspaceId");

-- CreateIndex
CREATE INDEX "ProjectionState_workspaceId_idx" ON "ProjectionState"("workspaceId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_workspaceId_idx" ON "WebhookDelivery"("workspaceId");
