/**
 * The database handle every layer takes as a parameter. Only the type lives here (the bottom
 * layer); `server/store/db.ts` decides which database the process talks to and opens it.
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";

export type Db = PrismaClient;
/** Either the client or an interactive-transaction client. */
export type DbTx = PrismaClient | Prisma.TransactionClient;
