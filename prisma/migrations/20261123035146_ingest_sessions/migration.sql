-- CreateTable
CREATE TABLE "IngestSession" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT '',
    "title" TEXT,
    "status" TEXT NOT NULL DEFAULT 'open',
    "messageCount" INTEGER NOT NULL DEFAULT 0,
    "lastMessageAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closedAt" TIMESTAMP(3),
    "recordId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IngestSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IngestMessage" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "time" TIMESTAMP(3) NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "IngestMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "IngestSession_workspaceId_idx" ON "IngestSession"("workspaceId");

-- CreateIndex
CREATE INDEX "IngestSession_status_lastMessageAt_idx" ON "IngestSession"("status", "lastMessageAt");

-- CreateIndex
CREATE UNIQUE INDEX "IngestSession_pipelineId_source_sessionId_key" ON "IngestSession"("pipelineId", "source", "sessionId");

-- CreateIndex
CREATE INDEX "IngestMessage_workspaceId_idx" ON "IngestMessage"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "IngestMessage_sessionId_position_key" ON "IngestMessage"("sessionId", "position");

-- AddForeignKey
ALTER TABLE "IngestMessage" ADD CONSTRAINT "IngestMessage_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "IngestSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;
