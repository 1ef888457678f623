/**
 * Values for JSON columns. `toJsonColumn` serializes exactly as the column will store the value
 * (undefined fields dropped, dates as ISO strings), which is what Prisma's input type describes,
 * so writes need no cast; reads are parsed with a zod schema where they are read.
 */
import type { Prisma } from "../generated/prisma/client";

export function toJsonColumn(value: unknown): Prisma.InputJsonValue {
  const json: Prisma.InputJsonValue | undefined = JSON.parse(JSON.stringify(value ?? null) ?? "null");
  if (json === null || json === undefined) throw new Error("A JSON column needs a value (got null or undefined).");
  return json;
}
