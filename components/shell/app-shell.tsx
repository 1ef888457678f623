"use client";
import { useMutation } from "@tanstack/react-query";
import { BookOpen, Check, ChevronsUpDown, CircleHelp, Cpu, FolderInput, GitCompare, KeyRound, Plus, Settings, SlidersHorizontal, SquareTerminal, Users, Workflow, UserRound, LogOut, ScrollText } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { signOut, useSession } from "next-auth/react";
import { useState, type ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { docsForPath } from "@/components/docs/links";
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from "@/components/ui/dropdown-menu";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { CreateWorkspaceDialog } from "./create-workspace-dialog";
import { useWorkspace } from "./workspace-context";

function WorkspaceSwitcher() {
  const { workspace, workspaces } = useWorkspace();
  const router = useRouter();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <Button variant="outline" className="w-full justify-between" data-testid="workspace-switcher">
            <span className="truncate">{workspace.name}</span>
            <ChevronsUpDown className="opacity-60" />
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent className="w-60" align="start">
          <DropdownMenuLabel>Workspaces</DropdownMenuLabel>
          {workspaces.map((w) => (
            <DropdownMenuItem key={w.id} onSelect={() => router.push(`/w/${w.slug}/pipelines`)}>
              <span className="flex-1 truncate">{w.name}</span>
              <span className="text-xs text-muted-foreground">{w.role}</span>
              {w.id === workspace.id ? <Check /> : null}
            </DropdownMenuItem>
          ))}
          <DropdownMenuSeparator />
          <DropdownMenuItem onSelect={() => setCreating(true)}>
            <Plus /> Create workspace
          </DropdownMenuItem>
        </DropdownMenuContent>
      </DropdownMenu>
      <CreateWorkspaceDialog open={creating} onOpenChange={setCreating} />
    </>
  );
}

function NavLink({ href, icon: Icon, children }: { href: string; icon: typeof Workflow; children: ReactNode }) {
  const pathname = usePathname();
  const active = pathname === href || pathname.startsWith(`${href}/`);
  return (
    <Link
      href={href}
      className={cn(
        "flex items-center gap-2 rounded-md px-2 py-1.5 text-sm text-muted-foreground hover:bg-accent hover:text-accent-foreground",
        active && "bg-accent font-medium text-accent-foreground",
      )}
    >
      <Icon className="size-4" />
      {children}
    </Link>
  );
}

/** Help: the docs (/docs), and the page about this part of the app when there is an obvious one. */
function HelpMenu() {
  const here = docsForPath(usePathname());
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button variant="ghost" size="sm" data-testid="help-menu" aria-label="Help">
          <CircleHelp /> Help
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end" className="w-64">
        <DropdownMenuItem asChild>
          <Link href="/docs">
            <BookOpen /> Documentation
          </Link>
        </DropdownMenuItem>
        {here ? (
          <DropdownMenuItem asChild>
            <Link href={`/docs/${here.slug}`} data-testid="help-this-page">
              <BookOpen /> {here.label}
            </Link>
          </DropdownMenuItem>
        ) : null}
        <DropdownMenuSeparator />
        <DropdownMenuItem asChild>
          <Link href="/docs/cli">
            <SquareTerminal /> CLI reference
          </Link>
        </DropdownMenuItem>
        <DropdownMenuItem asChild>
          <Link href="/docs/configuration">
            <SlidersHorizontal /> Configuration
          </Link>
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}

export function AppShell({ children }: { children: ReactNode }) {
  const { workspace } = useWorkspace();
  const { data: session } = useSession();
  const trpc = useTRPC();
  // Every device's session ends on the server; then this one's cookie goes too.
  const everywhere = useMutation(
    trpc.user.signOutEverywhere.mutationOptions({
      onSuccess: () => void signOut({ callbackUrl: "/signin" }),
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const base = `/w/${workspace.slug}`;
  return (
    <div className="flex min-h-screen">
      <aside className="flex w-60 shrink-0 flex-col gap-4 border-r bg-sidebar p-3">
        <div className="px-2 pt-1 text-lg font-semibold tracking-tight">Synthex</div>
        <WorkspaceSwitcher />
        <nav className="flex flex-col gap-1">
          <NavLink href={`${base}/pipelines`} icon={Workflow}>
            Pipelines
          </NavLink>
          <NavLink href={`${base}/compare`} icon={GitCompare}>
            Compare
          </NavLink>
          <div className="mt-3 px-2 text-xs font-medium uppercase tracking-wide text-muted-foreground">Settings</div>
          <NavLink href={`${base}/settings/general`} icon={Settings}>
            Workspace
          </NavLink>
          <NavLink href={`${base}/settings/members`} icon={Users}>
            Members
          </NavLink>
          <NavLink href={`${base}/settings/api-keys`} icon={KeyRound}>
            API keys
          </NavLink>
          <NavLink href={`${base}/settings/sources`} icon={FolderInput}>
            Sources
          </NavLink>
          <NavLink href={`${base}/settings/models`} icon={Cpu}>
            Models
          </NavLink>
          <NavLink href={`${base}/settings/audit`} icon={ScrollText}>
            Audit log
          </NavLink>
          <NavLink href={`${base}/settings/profile`} icon={UserRound}>
            Profile
          </NavLink>
        </nav>
      </aside>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex h-14 items-center justify-end gap-2 border-b px-6">
          <span className="mr-auto text-sm text-muted-foreground">
            {workspace.name} · <span data-testid="current-role">{workspace.role}</span>
          </span>
          <HelpMenu />
          <ThemeToggle />
          <DropdownMenu>
            <DropdownMenuTrigger asChild>
              <Button variant="ghost" size="sm" data-testid="user-menu">
                {session?.user?.email ?? "Account"}
              </Button>
            </DropdownMenuTrigger>
            <DropdownMenuContent align="end">
              <DropdownMenuItem onSelect={() => signOut({ callbackUrl: "/signin" })}>
                <LogOut /> Sign out
              </DropdownMenuItem>
              <DropdownMenuItem disabled={everywhere.isPending} onSelect={() => everywhere.mutate()}>
                <LogOut /> Sign out everywhere
              </DropdownMenuItem>
            </DropdownMenuContent>
          </DropdownMenu>
        </header>
        <main className="flex-1 p-6">{children}</main>
      </div>
    </div>
  );
}
