import { AuthCard } from "@/components/auth/auth-card";
import { AuthForm } from "@/components/auth/auth-form";
import { oauthProviderIds } from "@/server/auth/options";

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ invite?: string }> }) {
  const { invite } = await searchParams;
  return (
    <AuthCard
      title="Create your account"
      description={invite ? "Create an account to join the workspace you were invited to." : "You get a personal workspace to start."}
    >
      <AuthForm mode="signup" inviteToken={invite} oauth={oauthProviderIds()} />
    </AuthCard>
  );
}
