"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardFooter, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

export function ProfileSettings() {
  const trpc = useTRPC();
  const me = useQuery(trpc.user.me.queryOptions());
  if (!me.data) return <PageHeader title="Profile" description="Loading…" />;
  return <ProfileForm email={me.data.email} initialName={me.data.name ?? ""} />;
}

function ProfileForm({ email, initialName }: { email: string; initialName: string }) {
  const trpc = useTRPC();
  const [name, setName] = useState(initialName);
  const update = useMutation(
    trpc.user.updateProfile.mutationOptions({
      onSuccess: () => toast.success("Profile saved"),
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  return (
    <div className="max-w-2xl">
      <PageHeader title="Profile" description="How teammates see you." />
      <Card>
        <CardHeader>
          <CardTitle>{email}</CardTitle>
        </CardHeader>
        <CardContent className="space-y-2">
          <Label htmlFor="profile-name">Name</Label>
          <Input id="profile-name" value={name} onChange={(e) => setName(e.target.value)} />
        </CardContent>
        <CardFooter>
          <Button disabled={update.isPending} onClick={() => update.mutate({ name })}>
            Save
          </Button>
        </CardFooter>
      </Card>
    </div>
  );
}
