import { auditPageSchema, listAudit, listAuditInput } from "../../services/audit";
import { createTRPCRouter, workspaceProcedure } from "../trpc";

/** Settings → Audit log (owners and admins): who did what, newest first. */
export const auditRouter = createTRPCRouter({
  list: workspaceProcedure("audit:read")
    .meta({ rest: { method: "GET", path: "/audit", summary: "The workspace's audit log, newest first", tag: "Audit" } })
    .input(listAuditInput)
    .output(auditPageSchema)
    .query(({ ctx, input }) => listAudit(ctx.db, ctx.workspace.id, input)),
});
