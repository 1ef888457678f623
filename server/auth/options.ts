import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import GoogleProvider from "next-auth/providers/google";
import { clientAddress } from "../http/client-address";
import { getDb } from "../store/db";
import { findOrCreateOAuthUser, signInWithPassword } from "../services/users";

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

export const authOptions: NextAuthOptions = {
  session: { strategy: "jwt" },
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
      if (account && user?.email) {
        const db = await getDb();
        const dbUser = await db.user.findUnique({ where: { email: user.email.toLowerCase() } });
        if (dbUser) token.sub = dbUser.id;
      }
      return token;
    },
    session({ session, token }) {
      if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
      return session;
    },
  },
};

export const oauthProviderIds = () => oauthProviders().map((p) => p.id);
