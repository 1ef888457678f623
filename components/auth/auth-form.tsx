"use client";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { errorMessage, useTRPC } from "@/lib/trpc";

/** next-auth reports a wrong password as "CredentialsSignin"; anything else (the sign-in limit) is our message. */
function signInProblem(mode: "signin" | "signup", error: string | null | undefined): string {
  if (error && error !== "CredentialsSignin") return error;
  return mode === "signup"
    ? "Could not sign you in. If this email already has an account, sign in with its password instead."
    : "Email or password is not right.";
}

/** Sign in and sign up share one form; with an invite token the new session joins that workspace. */
export function AuthForm({ mode, inviteToken, oauth }: { mode: "signin" | "signup"; inviteToken?: string; oauth: string[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const signUp = useMutation(trpc.user.signUp.mutationOptions());
  const accept = useMutation(trpc.invite.accept.mutationOptions());

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    setError(null);
    setPending(true);
    try {
      // Sign-up answers the same whether or not the email has an account; signing in tells the owner which.
      if (mode === "signup") await signUp.mutateAsync({ email, password, name: String(form.get("name") ?? "") });
      const result = await signIn("credentials", { email, password, redirect: false });
      if (!result || result.error) throw new Error(signInProblem(mode, result?.error));
      if (inviteToken) {
        const joined = await accept.mutateAsync({ token: inviteToken });
        router.push(`/w/${joined.slug}/pipelines`);
      } else {
        router.push("/");
      }
      router.refresh();
    } catch (err) {
      setError(errorMessage(err));
      setPending(false);
    }
  }

  const other = mode === "signin" ? "/signup" : "/signin";
  const otherQuery = inviteToken ? `?invite=${encodeURIComponent(inviteToken)}` : "";
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate>
      {mode === "signup" ? (
        <div className="space-y-2">
          <Label htmlFor="name">Name</Label>
          <Input id="name" name="name" autoComplete="name" />
        </div>
      ) : null}
      <div className="space-y-2">
        <Label htmlFor="email">Email</Label>
        <Input id="email" name="email" type="email" autoComplete="email" required />
      </div>
      <div className="space-y-2">
        <Label htmlFor="password">Password</Label>
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete={mode === "signup" ? "new-password" : "current-password"}
          required
        />
        {mode === "signup" ? <p className="text-xs text-muted-foreground">At least 8 characters.</p> : null}
      </div>
      {error ? (
        <p role="alert" className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
      <Button type="submit" className="w-full" disabled={pending}>
        {mode === "signin" ? "Sign in" : "Create account"}
      </Button>
      {oauth.map((id) => (
        <Button key={id} type="button" variant="outline" className="w-full" onClick={() => signIn(id, { callbackUrl: "/" })}>
          Continue with {id === "github" ? "GitHub" : "Google"}
        </Button>
      ))}
      <p className="text-center text-sm text-muted-foreground">
        {mode === "signin" ? "New here? " : "Already have an account? "}
        <Link className="text-primary underline-offset-4 hover:underline" href={`${other}${otherQuery}`}>
          {mode === "signin" ? "Create an account" : "Sign in"}
        </Link>
      </p>
    </form>
  );
}
