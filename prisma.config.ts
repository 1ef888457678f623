import { defineConfig } from "prisma/config";

// `prisma generate` only checks that the schema engine binary exists; it never runs it.
// The real engine cannot be downloaded offline, so point at a harmless file.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= "/bin/false";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
