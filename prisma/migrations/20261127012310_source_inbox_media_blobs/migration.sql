-- CreateTable
CREATE TABLE "SourceInbox" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "lastEvent" TEXT,
    "lastEventAt" TIMESTAMP(3),

    CONSTRAINT "SourceInbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MediaBlob" (
    "workspaceId" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "width" INTEGER NOT NULL,
    "height" INTEGER NOT NULL,
    "bytes" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MediaBlob_pkey" PRIMARY KEY ("workspaceId","sha256")
);

-- CreateIndex
CREATE INDEX "SourceInbox_workspaceId_idx" ON "SourceInbox"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "SourceInbox_pipelineId_source_key" ON "SourceInbox"("pipelineId", "source");
