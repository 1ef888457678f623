-- AlterTable
ALTER TABLE "EvalRun" ADD COLUMN     "leaseExpiresAt" TIMESTAMP(3),
ADD COLUMN     "leaseOwner" TEXT;

-- CreateIndex
CREATE INDEX "EvalRun_status_leaseExpiresAt_idx" ON "EvalRun"("status", "leaseExpiresAt");
