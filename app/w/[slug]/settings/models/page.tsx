import { ModelsSettings } from "@/components/settings/models-settings";

export default function Page() {
  return <ModelsSettings />;
}
