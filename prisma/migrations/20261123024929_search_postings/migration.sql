-- Statistics of branches that no longer exist (no foreign key kept them clean), and statistics
-- computed before postings existed: the next index run recomputes both from the pointers.
DELETE FROM "SearchTermStat";
DELETE FROM "SearchStepStat";

-- CreateTable
CREATE TABLE "SearchDoc" (
    "workspaceId" TEXT NOT NULL,
    "branchId" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "recordId" TEXT NOT NULL,
    "len" INTEGER NOT NULL,

    CONSTRAINT "SearchDoc_pkey" PRIMARY KEY ("branchId","step","recordId")
);

-- CreateTable
CREATE TABLE "SearchPosting" (
    "workspaceId" TEXT NOT NULL,
    "branchId" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "term" TEXT NOT NULL,
    "recordId" TEXT NOT NULL,
    "tf" INTEGER NOT NULL,
    "len" INTEGER NOT NULL,
    "scope" TEXT NOT NULL,

    CONSTRAINT "SearchPosting_pkey" PRIMARY KEY ("branchId","step","term","recordId")
);

-- CreateIndex
CREATE INDEX "SearchDoc_workspaceId_idx" ON "SearchDoc"("workspaceId");

-- AddForeignKey
ALTER TABLE "SearchStepStat" ADD CONSTRAINT "SearchStepStat_branchId_fkey" FOREIGN KEY ("branchId") REFERENCES "Branch"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SearchTermStat" ADD CONSTRAINT "SearchTermStat_branchId_fkey" FOREIGN KEY ("branchId") REFERENCES "Branch"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SearchDoc" ADD CONSTRAINT "SearchDoc_branchId_fkey" FOREIGN KEY ("branchId") REFERENCES "Branch"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SearchPosting" ADD CONSTRAINT "SearchPosting_branchId_fkey" FOREIGN KEY ("branchId") REFERENCES "Branch"("id") ON DELETE CASCADE ON UPDATE CASCADE;
