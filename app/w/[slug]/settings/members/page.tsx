import { MembersSettings } from "@/components/settings/members-settings";

export default function Page() {
  return <MembersSettings />;
}
