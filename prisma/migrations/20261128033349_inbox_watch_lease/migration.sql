-- AlterTable
ALTER TABLE "SourceImport" ADD COLUMN     "contentSha256" TEXT;

-- AlterTable
ALTER TABLE "SourceInbox" ADD COLUMN     "watchedUntil" TIMESTAMP(3),
ADD COLUMN     "watcherId" TEXT;

-- CreateIndex
CREATE INDEX "SourceImport_pipelineId_source_contentSha256_idx" ON "SourceImport"("pipelineId", "source", "contentSha256");
