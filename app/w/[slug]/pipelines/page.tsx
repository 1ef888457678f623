import { PipelinesPage } from "@/components/pipelines/pipelines-page";

export default function Page() {
  return <PipelinesPage />;
}
