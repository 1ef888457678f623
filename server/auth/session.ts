import { getServerSession } from "next-auth";
import { authOptions } from "./options";

/** The signed-in user, or null. For server components, route handlers and the tRPC context. */
export async function getSessionUser(): Promise<{ userId: string; email: string } | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { id?: string; email?: string | null } | undefined;
  if (!user?.id || !user.email) return null;
  return { userId: user.id, email: user.email };
}
