import type { Prisma, PrismaClient } from "../generated/prisma/client";

export type Db = PrismaClient;
/** Either the client or an interactive-transaction client. */
export type DbTx = PrismaClient | Prisma.TransactionClient;
