-- AlterTable
ALTER TABLE "AuditEvent" ADD COLUMN     "actorLabel" TEXT NOT NULL DEFAULT '';
