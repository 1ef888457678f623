import { CanvasEditor } from "@/components/canvas/canvas-page";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return <CanvasEditor pipelineId={pipelineId} />;
}
