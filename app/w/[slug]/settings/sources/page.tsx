import { SourcesSettings } from "@/components/settings/sources-settings";

export default function Page() {
  return <SourcesSettings />;
}
