/** Who may do what. Procedures declare one permission when they are built; middleware checks it once. */
export const ROLES = ["owner", "admin", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  "workspace:read",
  "workspace:update",
  "members:read",
  "members:manage",
  "apiKeys:manage",
  "pipelines:read",
  "pipelines:write",
  "runs:write",
  "providers:manage",
  "evals:read",
  "evals:write",
  /** Create, save on, delete branches (and run gc's dry run). */
  "branches:write",
  /** Promote a branch into an unprotected main. */
  "branches:promote",
  /** Protect main, save on or promote into a protected main, collect garbage. */
  "branches:admin",
  /** Delete records and everything derived from them (purge, GDPR), with an audit entry. */
  "records:purge",
  /** Read the workspace's audit log. */
  "audit:read",
  /** Read a pipeline's query log (what agents asked, what was served), replay it on a branch, label it. Not given to viewers. */
  "log:read",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READ: Permission[] = ["workspace:read", "members:read", "pipelines:read", "evals:read"];
const EDIT: Permission[] = [...READ, "pipelines:write", "runs:write", "evals:write", "branches:write", "branches:promote", "log:read"];
const ADMIN: Permission[] = [...EDIT, "workspace:update", "members:manage", "apiKeys:manage", "providers:manage", "branches:admin", "records:purge", "audit:read"];

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(ADMIN),
  admin: new Set(ADMIN),
  editor: new Set(EDIT),
  viewer: new Set(READ),
};

/** Permissions that only read: all a read-only API key is allowed. */
export function isReadPermission(permission: Permission): boolean {
  return READ.includes(permission);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function can(role: string, permission: Permission): boolean {
  return isRole(role) && ROLE_PERMISSIONS[role].has(permission);
}

/** Roles a member with `actor` role may hand out: only owners make owners. */
export function canAssignRole(actor: Role, target: Role): boolean {
  if (target === "owner") return actor === "owner";
  return can(actor, "members:manage");
}

/** The less powerful of two roles (ROLES runs from most to least): an API key acts with min(its role, its creator's role). */
export function lowerRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b;
}
