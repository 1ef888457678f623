import Link from "next/link";
import { TRPCError } from "@trpc/server";
import { AuthCard } from "@/components/auth/auth-card";
import { AcceptInviteButton } from "@/components/auth/accept-invite-button";
import { Button } from "@/components/ui/button";
import { serverCaller } from "@/server/api/server-caller";
import { getSessionUser } from "@/server/auth/session";

export const dynamic = "force-dynamic";

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const caller = await serverCaller();
  const preview = await caller.invite.preview({ token }).catch((err: unknown) => {
    if (err instanceof TRPCError) return { error: err.message };
    throw err;
  });
  if ("error" in preview) {
    return (
      <AuthCard title="Invite not usable" description={preview.error}>
        <Button asChild variant="outline" className="w-full">
          <Link href="/">Go to Synthex</Link>
        </Button>
      </AuthCard>
    );
  }
  const signedIn = Boolean(await getSessionUser());
  const q = `?invite=${encodeURIComponent(token)}`;
  return (
    <AuthCard
      title={`Join ${preview.workspaceName}`}
      description={`You are invited as ${preview.role}. The link expires ${preview.expiresAt.toUTCString()}.`}
    >
      {signedIn ? (
        <AcceptInviteButton token={token} />
      ) : (
        <div className="space-y-2">
          <Button asChild className="w-full">
            <Link href={`/signup${q}`}>Create an account to join</Link>
          </Button>
          <Button asChild variant="outline" className="w-full">
            <Link href={`/signin${q}`}>I already have an account</Link>
          </Button>
        </div>
      )}
    </AuthCard>
  );
}
