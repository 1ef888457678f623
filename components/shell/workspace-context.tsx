"use client";
import { createContext, useContext, type ReactNode } from "react";
import { can, type Permission, type Role } from "@/server/auth/permissions";

export interface WorkspaceSummary {
  id: string;
  slug: string;
  name: string;
  role: Role;
  personal: boolean;
}

const WorkspaceContext = createContext<{ workspace: WorkspaceSummary; workspaces: WorkspaceSummary[] } | null>(null);

export function WorkspaceProvider({
  workspace,
  workspaces,
  children,
}: {
  workspace: WorkspaceSummary;
  workspaces: WorkspaceSummary[];
  children: ReactNode;
}) {
  return <WorkspaceContext.Provider value={{ workspace, workspaces }}>{children}</WorkspaceContext.Provider>;
}

export function useWorkspace() {
  const value = useContext(WorkspaceContext);
  if (!value) throw new Error("useWorkspace outside a workspace page");
  return value;
}

/** For hiding actions the server would refuse anyway. */
export function useCan(permission: Permission) {
  return can(useWorkspace().workspace.role, permission);
}
