import { ApiKeysSettings } from "@/components/settings/api-keys-settings";

export default function Page() {
  return <ApiKeysSettings />;
}
