-- AlterTable
ALTER TABLE "Branch" ADD COLUMN     "baseVersionId" TEXT,
ADD COLUMN     "createdById" TEXT,
ADD COLUMN     "description" TEXT NOT NULL DEFAULT '';

-- AlterTable
ALTER TABLE "Pipeline" ADD COLUMN     "protectedMain" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "BranchPromotion" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "branchName" TEXT NOT NULL,
    "targetName" TEXT NOT NULL,
    "fromVersionId" TEXT NOT NULL,
    "toVersionId" TEXT NOT NULL,
    "promotedById" TEXT,
    "summary" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BranchPromotion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BranchPromotion_pipelineId_createdAt_idx" ON "BranchPromotion"("pipelineId", "createdAt");

-- CreateIndex
CREATE INDEX "BranchPromotion_workspaceId_idx" ON "BranchPromotion"("workspaceId");
