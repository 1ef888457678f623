"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { Button } from "@/components/ui/button";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

export function AcceptInviteButton({ token }: { token: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const accept = useMutation(
    trpc.invite.accept.mutationOptions({
      onSuccess: (joined) => {
        toast.success(`Joined as ${joined.role}`);
        router.push(`/w/${joined.slug}/pipelines`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  return (
    <Button className="w-full" disabled={accept.isPending} onClick={() => accept.mutate({ token })}>
      Accept invite
    </Button>
  );
}
