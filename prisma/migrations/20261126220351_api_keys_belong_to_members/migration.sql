-- synthex:manual begin
-- API keys belong to the member who made them (issue 30): authentication now refuses a key whose
-- creator is not a member of its workspace and caps its role at the creator's current role.
-- Data only, no schema change.

-- A key made with an API key recorded "apikey:<id>" as its creator: it belongs to the member that
-- key (or, for a chain, the first key) belongs to.
WITH RECURSIVE chain(id, owner, depth) AS (
  SELECT id, "createdById", 0 FROM "ApiKey" WHERE "createdById" LIKE 'apikey:%'
  UNION ALL
  SELECT c.id, p."createdById", c.depth + 1 FROM chain c JOIN "ApiKey" p ON c.owner = 'apikey:' || p.id WHERE c.depth < 50
)
UPDATE "ApiKey" AS k SET "createdById" = c.owner
FROM chain c
WHERE c.id = k.id AND c.owner NOT LIKE 'apikey:%';

-- Keys of people who already left or were removed stopped working with this release; say so in the list.
UPDATE "ApiKey" AS k SET "revokedAt" = (now() AT TIME ZONE 'UTC')
WHERE k."revokedAt" IS NULL
  AND NOT EXISTS (SELECT 1 FROM "Membership" m WHERE m."workspaceId" = k."workspaceId" AND m."userId" = k."createdById");
-- synthex:manual end
