import { redirect } from "next/navigation";

export default async function SettingsIndex({ params }: { params: Promise<{ slug: string }> }) {
  redirect(`/w/${(await params).slug}/settings/general`);
}
