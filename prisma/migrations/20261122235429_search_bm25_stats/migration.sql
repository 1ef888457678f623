-- CreateTable
CREATE TABLE "SearchStepStat" (
    "workspaceId" TEXT NOT NULL,
    "branchId" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "docs" INTEGER NOT NULL,
    "avgLength" DOUBLE PRECISION NOT NULL,
    "signature" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SearchStepStat_pkey" PRIMARY KEY ("branchId","step")
);

-- CreateTable
CREATE TABLE "SearchTermStat" (
    "workspaceId" TEXT NOT NULL,
    "branchId" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "term" TEXT NOT NULL,
    "df" INTEGER NOT NULL,

    CONSTRAINT "SearchTermStat_pkey" PRIMARY KEY ("branchId","step","term")
);

-- CreateIndex
CREATE INDEX "SearchStepStat_workspaceId_idx" ON "SearchStepStat"("workspaceId");

-- CreateIndex
CREATE INDEX "SearchTermStat_workspaceId_idx" ON "SearchTermStat"("workspaceId");
