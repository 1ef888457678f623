import { AuditLogSettings } from "@/components/settings/audit-log-settings";

export default function Page() {
  return <AuditLogSettings />;
}
