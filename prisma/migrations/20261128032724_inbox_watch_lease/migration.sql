-- AlterTable
ALTER TABLE "SourceInbox" ADD COLUMN     "watchedUntil" TIMESTAMP(3),
ADD COLUMN     "watcherId" TEXT;
