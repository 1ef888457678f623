import { redirect } from "next/navigation";
import { serverCaller } from "@/server/api/server-caller";
import { getSessionUser } from "@/server/auth/session";

export const dynamic = "force-dynamic";

export default async function Home() {
  if (!(await getSessionUser())) redirect("/signin");
  const workspaces = await (await serverCaller()).workspace.list();
  const first = workspaces.find((w) => w.personal) ?? workspaces[0];
  if (!first) redirect("/signup");
  redirect(`/w/${first.slug}/pipelines`);
}
