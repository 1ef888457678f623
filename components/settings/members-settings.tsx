"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Copy } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Select, SelectContent, SelectItem, SelectTrigger, SelectValue } from "@/components/ui/select";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { ROLES } from "@/server/auth/permissions";

function RoleSelect({ value, onChange, disabled, testId }: { value: string; onChange(v: string): void; disabled?: boolean; testId?: string }) {
  return (
    <Select value={value} onValueChange={onChange} disabled={disabled}>
      <SelectTrigger className="w-32" data-testid={testId}>
        <SelectValue />
      </SelectTrigger>
      <SelectContent>
        {ROLES.map((r) => (
          <SelectItem key={r} value={r}>
            {r}
          </SelectItem>
        ))}
      </SelectContent>
    </Select>
  );
}

function Invites() {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [role, setRole] = useState("editor");
  const [link, setLink] = useState<string | null>(null);
  const invites = useQuery(trpc.invite.list.queryOptions({ workspaceId: workspace.id }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.invite.list.queryKey() });
  const create = useMutation(
    trpc.invite.create.mutationOptions({
      onMutate: () => setLink(null),
      onSuccess: (invite) => {
        setLink(`${window.location.origin}/invite/${invite.token}`);
        refresh();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const revoke = useMutation(
    trpc.invite.revoke.mutationOptions({ onSuccess: refresh, onError: (err) => toast.error(errorMessage(err)) }),
  );
  return (
    <Card>
      <CardHeader>
        <CardTitle>Invite by link</CardTitle>
        <CardDescription>
          Anyone with the link can join once, with the role you choose. Links expire after 7 days. A link ends when the member who made it leaves or is removed, or is
          demoted below the role it grants.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        <div className="flex items-center gap-2">
          <RoleSelect value={role} onChange={setRole} testId="invite-role" />
          <Button
            data-testid="create-invite"
            disabled={create.isPending}
            onClick={() => create.mutate({ workspaceId: workspace.id, role: role as (typeof ROLES)[number] })}
          >
            Create invite link
          </Button>
        </div>
        {link ? (
          <div className="flex items-center gap-2">
            <Input readOnly value={link} data-testid="invite-link" />
            <Button
              variant="outline"
              size="icon"
              aria-label="Copy invite link"
              onClick={() => navigator.clipboard?.writeText(link).then(() => toast.success("Copied"))}
            >
              <Copy />
            </Button>
          </div>
        ) : null}
        {invites.data?.length ? (
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Role</TableHead>
                <TableHead>Created by</TableHead>
                <TableHead>Expires</TableHead>
                <TableHead />
              </TableRow>
            </TableHeader>
            <TableBody>
              {invites.data.map((inv) => (
                <TableRow key={inv.id} data-testid="invite-row">
                  <TableCell>{inv.role}</TableCell>
                  <TableCell data-testid="invite-created-by">
                    {inv.createdBy ? (
                      <>
                        <div>{inv.createdBy.name ?? inv.createdBy.email}</div>
                        {inv.createdBy.name ? <div className="text-xs text-muted-foreground">{inv.createdBy.email}</div> : null}
                      </>
                    ) : (
                      <span className="text-muted-foreground">a deleted account</span>
                    )}
                  </TableCell>
                  <TableCell>{inv.expiresAt.toLocaleString()}</TableCell>
                  <TableCell className="text-right">
                    <Button variant="ghost" size="sm" onClick={() => revoke.mutate({ workspaceId: workspace.id, inviteId: inv.id })}>
                      Revoke
                    </Button>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        ) : null}
      </CardContent>
    </Card>
  );
}

export function MembersSettings() {
  const { workspace } = useWorkspace();
  const canManage = useCan("members:manage");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const members = useQuery(trpc.member.list.queryOptions({ workspaceId: workspace.id }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.member.list.queryKey() });
  const opts = { onSuccess: refresh, onError: (err: unknown) => toast.error(errorMessage(err)) };
  const changeRole = useMutation(
    trpc.member.changeRole.mutationOptions({
      ...opts,
      onSuccess: (out) => {
        if (out.invitesRevoked) toast.success(`Role changed; ${out.invitesRevoked} invite link${out.invitesRevoked === 1 ? "" : "s"} they made for a higher role revoked.`);
        void queryClient.invalidateQueries({ queryKey: trpc.invite.list.queryKey() });
        return refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.member.remove.mutationOptions({
      ...opts,
      onSuccess: (out) => {
        const revoked = [
          out.keysRevoked ? `${out.keysRevoked} API key${out.keysRevoked === 1 ? "" : "s"}` : "",
          out.invitesRevoked ? `${out.invitesRevoked} invite link${out.invitesRevoked === 1 ? "" : "s"}` : "",
        ].filter(Boolean);
        if (revoked.length) toast.success(`Member removed; ${revoked.join(" and ")} they made revoked.`);
        void queryClient.invalidateQueries({ queryKey: trpc.invite.list.queryKey() });
        return refresh();
      },
    }),
  );
  return (
    <div className="max-w-3xl space-y-6">
      <PageHeader
        title="Members"
        description="People in this workspace and what they may do. A member's API keys act with at most their current role; removing a member revokes the keys and invite links they made."
      />
      <Card>
        <CardContent>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Member</TableHead>
                <TableHead>Role</TableHead>
                <TableHead>API keys</TableHead>
                <TableHead />
              </TableRow>
            </TableHeader>
            <TableBody>
              {members.data?.map((m) => (
                <TableRow key={m.id} data-testid="member-row">
                  <TableCell>
                    <div className="font-medium">{m.user.name ?? m.user.email}</div>
                    <div className="text-xs text-muted-foreground">{m.user.email}</div>
                  </TableCell>
                  <TableCell>
                    {canManage ? (
                      <RoleSelect
                        value={m.role}
                        onChange={(role) => changeRole.mutate({ workspaceId: workspace.id, memberId: m.id, role })}
                      />
                    ) : (
                      <Badge variant="secondary">{m.role}</Badge>
                    )}
                  </TableCell>
                  <TableCell className="text-muted-foreground" data-testid="member-keys">
                    {m.apiKeys || "none"}
                  </TableCell>
                  <TableCell className="text-right">
                    {canManage ? (
                      <Button
                        variant="ghost"
                        size="sm"
                        onClick={() => {
                          const keys = m.apiKeys ? ` Their ${m.apiKeys} API key${m.apiKeys === 1 ? "" : "s"} will be revoked.` : "";
                          if (window.confirm(`Remove ${m.user.email} from ${workspace.name}?${keys}`)) remove.mutate({ workspaceId: workspace.id, memberId: m.id });
                        }}
                      >
                        Remove
                      </Button>
                    ) : null}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </CardContent>
      </Card>
      {canManage ? <Invites /> : null}
    </div>
  );
}
