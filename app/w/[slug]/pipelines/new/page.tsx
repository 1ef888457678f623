import { NewPipelineForm } from "@/components/pipelines/new-pipeline-form";

export default function Page() {
  return <NewPipelineForm />;
}
