import { AuthCard } from "@/components/auth/auth-card";
import { AuthForm } from "@/components/auth/auth-form";
import { oauthProviderIds } from "@/server/auth/options";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ invite?: string }> }) {
  const { invite } = await searchParams;
  return (
    <AuthCard title="Sign in" description={invite ? "Sign in to accept your invite." : undefined}>
      <AuthForm mode="signin" inviteToken={invite} oauth={oauthProviderIds()} />
    </AuthCard>
  );
}
