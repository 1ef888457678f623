-- CreateTable
CREATE TABLE "SearchIndexState" (
    "branchId" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "coverage" TEXT NOT NULL,
    "indexedThrough" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SearchIndexState_pkey" PRIMARY KEY ("branchId")
);

-- CreateIndex
CREATE INDEX "SearchIndexState_workspaceId_idx" ON "SearchIndexState"("workspaceId");

-- CreateIndex
CREATE INDEX "BranchPointer_branchId_updatedAt_idx" ON "BranchPointer"("branchId", "updatedAt");

-- AddForeignKey
ALTER TABLE "SearchIndexState" ADD CONSTRAINT "SearchIndexState_branchId_fkey" FOREIGN KEY ("branchId") REFERENCES "Branch"("id") ON DELETE CASCADE ON UPDATE CASCADE;
