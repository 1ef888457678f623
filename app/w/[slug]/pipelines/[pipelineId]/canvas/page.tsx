import { CanvasEditor } from "@/components/canvas/canvas-editor";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return <CanvasEditor pipelineId={pipelineId} />;
}
