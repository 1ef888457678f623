"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

export function GeneralSettings() {
  const { workspace } = useWorkspace();
  const canUpdate = useCan("workspace:update");
  const trpc = useTRPC();
  const router = useRouter();
  const [name, setName] = useState(workspace.name);
  const rename = useMutation(
    trpc.workspace.rename.mutationOptions({
      onSuccess: () => {
        toast.success("Workspace renamed");
        router.refresh();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const [signingSecret, setSigningSecret] = useState<string | null>(null);
  const rotate = useMutation(
    trpc.workspace.rotateWebhookSecret.mutationOptions({
      onSuccess: (answer) => {
        setSigningSecret(answer.secret);
        toast.success("New webhook signing secret: copy it now, it is shown once");
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const leave = useMutation(
    trpc.workspace.leave.mutationOptions({
      onSuccess: () => {
        toast.success(`You left ${workspace.name}`);
        router.push("/");
        router.refresh();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  return (
    <div className="max-w-2xl space-y-6">
      <PageHeader title="Workspace" description="Name and membership of this workspace." />
      <Card>
        <CardHeader>
          <CardTitle>Name</CardTitle>
          <CardDescription>Shown to every member in the workspace switcher.</CardDescription>
        </CardHeader>
        <CardContent className="space-y-2">
          <Label htmlFor="ws-name">Workspace name</Label>
          <Input id="ws-name" value={name} disabled={!canUpdate} onChange={(e) => setName(e.target.value)} />
        </CardContent>
        <CardFooter>
          <Button
            disabled={!canUpdate || rename.isPending || name.trim() === workspace.name}
            onClick={() => rename.mutate({ workspaceId: workspace.id, name })}
          >
            Save
          </Button>
          {!canUpdate ? <span className="ml-3 text-sm text-muted-foreground">Only owners and admins can rename.</span> : null}
        </CardFooter>
      </Card>
      {canUpdate ? (
        <Card>
          <CardHeader>
            <CardTitle>Webhook signing secret</CardTitle>
            <CardDescription>
              Projection webhooks carry <code>X-Synthex-Signature</code>, an HMAC of the body with this secret. A new secret is shown
              here once; the previous one stops working at once.
            </CardDescription>
          </CardHeader>
          {signingSecret ? (
            <CardContent className="space-y-2">
              <Label htmlFor="webhook-secret">New secret (shown once)</Label>
              <Input id="webhook-secret" data-testid="webhook-secret" readOnly value={signingSecret} onFocus={(e) => e.currentTarget.select()} />
            </CardContent>
          ) : null}
          <CardFooter>
            <Button variant="outline" disabled={rotate.isPending} onClick={() => rotate.mutate({ workspaceId: workspace.id })}>
              {signingSecret ? "Rotate again" : "Rotate secret"}
            </Button>
          </CardFooter>
        </Card>
      ) : null}
      {!workspace.personal ? (
        <Card>
          <CardHeader>
            <CardTitle>Leave workspace</CardTitle>
            <CardDescription>You lose access to its pipelines. The last owner cannot leave.</CardDescription>
          </CardHeader>
          <CardFooter>
            <Button variant="destructive" disabled={leave.isPending} onClick={() => leave.mutate({ workspaceId: workspace.id })}>
              Leave {workspace.name}
            </Button>
          </CardFooter>
        </Card>
      ) : null}
    </div>
  );
}
