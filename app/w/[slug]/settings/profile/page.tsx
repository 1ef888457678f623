import { ProfileSettings } from "@/components/settings/profile-settings";

export default function Page() {
  return <ProfileSettings />;
}
