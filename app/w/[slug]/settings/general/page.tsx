import { GeneralSettings } from "@/components/settings/general-settings";

export default function Page() {
  return <GeneralSettings />;
}
