-- AlterTable
ALTER TABLE "EvalRun" ADD COLUMN     "aggregates" JSONB;
