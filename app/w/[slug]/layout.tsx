import Link from "next/link";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { WorkspaceProvider } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { serverCaller } from "@/server/api/server-caller";
import { getSessionUser } from "@/server/auth/session";

export const dynamic = "force-dynamic";

export default async function WorkspaceLayout({ children, params }: { children: ReactNode; params: Promise<{ slug: string }> }) {
  if (!(await getSessionUser())) redirect("/signin");
  const { slug } = await params;
  const workspaces = (await (await serverCaller()).workspace.list()).map((w) => ({
    id: w.id,
    slug: w.slug,
    name: w.name,
    role: w.role,
    personal: w.personal,
  }));
  const workspace = workspaces.find((w) => w.slug === slug);
  if (!workspace) {
    return (
      <main className="flex min-h-screen items-center justify-center p-6">
        <EmptyState
          title="Workspace not found"
          description={`There is no workspace "${slug}", or you are not a member of it.`}
          action={
            <Button asChild>
              <Link href="/">Go to your workspace</Link>
            </Button>
          }
        />
      </main>
    );
  }
  return (
    <WorkspaceProvider workspace={workspace} workspaces={workspaces}>
      <AppShell>{children}</AppShell>
    </WorkspaceProvider>
  );
}
