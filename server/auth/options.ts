import type { NextAuthOptions } from "next-auth";
import { headers } from "next/headers";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import GoogleProvider from "next-auth/providers/google";
import { clientAddress } from "../http/client-address";
import { getDb } from "../store/db";
import { checkSession, issueSessionClaims, SessionRefusedError, signOutSession } from "../services/sessions";
import { findOrCreateOAuthUser, signInWithPassword } from "../services/users";
import { authCookies } from "./cookies";

/** OAuth providers appear only when their credentials are configured. */
function oauthProviders() {
  const providers = [];
  if (process.env.GITHUB_ID && process.env.GITHUB_SECRET) {
    providers.push(GitHubProvider({ clientId: process.env.GITHUB_ID, clientSecret: process.env.GITHUB_SECRET }));
  }
  if (process.env.GOOGLE_ID && process.env.GOOGLE_SECRET) {
    providers.push(GoogleProvider({ clientId: process.env.GOOGLE_ID, clientSecret: process.env.GOOGLE_SECRET }));
  }
  return providers;
}

/** next-auth's default session lifetime (30 days), spelled out: a signed-out token is remembered this long. */
const SESSION_MAX_AGE = 30 * 24 * 60 * 60;

/** The Host header of the request being served (sign-in, or a session read); null outside a request. */
async function requestHost(): Promise<string | null> {
  try {
    return (await headers()).get("host");
  } catch {
    return null;
  }
}

/**
 * JWT sessions that sign-out ends on the server and that work only at the Host they were issued
 * for: see server/services/sessions.ts (claims sid/gen/host, checked on every read) and
 * server/auth/cookies.ts (cookie names: `__Host-` over HTTPS, the port in the name over http).
 */
export const authOptions: NextAuthOptions = {
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE },
  cookies: authCookies(),
  pages: { signIn: "/signin" },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, req) {
        if (!credentials?.email || !credentials.password) return null;
        // A SignInLimitedError thrown here reaches the form as its message ("try again in N seconds").
        const user = await signInWithPassword(await getDb(), {
          email: credentials.email,
          password: credentials.password,
          // The socket peer, or X-Forwarded-For only behind SYNTHEX_TRUSTED_PROXIES: a client cannot pick its bucket.
          address: clientAddress(req?.headers),
        });
        return user ? { id: user.id, email: user.email, name: user.name } : null;
      },
    }),
    ...oauthProviders(),
  ],
  callbacks: {
    async signIn({ user, account }) {
      if (account?.provider === "credentials") return true;
      if (!user.email) return false;
      await findOrCreateOAuthUser(await getDb(), user.email, user.name);
      return true;
    },
    async jwt({ token, account, user }) {
      const db = await getDb();
      if (user) {
        // Sign-in: the user's id in this database, then the claims that let the server end the session.
        if (account && user.email) {
          const dbUser = await db.user.findUnique({ where: { email: user.email.toLowerCase() } });
          if (dbUser) token.sub = dbUser.id;
        }
        if (!token.sub) throw new SessionRefusedError("sign-in without a user id");
        return { ...token, ...(await issueSessionClaims(db, token.sub, await requestHost())) };
      }
      // Every session read: a signed-out, signed-out-everywhere or foreign-Host token throws, which
      // next-auth answers as "no session" (and clears the cookie).
      await checkSession(db, token, await requestHost());
      return token;
    },
    session({ session, token }) {
      if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
      return session;
    },
  },
  events: {
    // next-auth's sign-out (POST /api/auth/signout, with its CSRF token) hands over the decoded token.
    async signOut({ token }) {
      await signOutSession(await getDb(), token, SESSION_MAX_AGE);
    },
  },
  logger: {
    error(code, metadata) {
      // A refused token is an expected answer ("signed out"), not a server error: one line, no stack.
      const err = metadata instanceof Error ? metadata : (metadata as { error?: unknown } | undefined)?.error;
      if (err instanceof SessionRefusedError || (err as { name?: string } | undefined)?.name === "SessionRefusedError") {
        console.warn(`[synthex] session refused: ${(err as Error).message}`);
        return;
      }
      console.error(`[next-auth][error][${code}]`, metadata);
    },
  },
};

export const oauthProviderIds = () => oauthProviders().map((p) => p.id);
