import { z } from "zod";
import { UNKNOWN_ADDRESS } from "../../http/client-address";
import { signOutEverywhere } from "../../services/sessions";
import * as users from "../../services/users";
import { createTRPCRouter, publicProcedure, userProcedure } from "../trpc";

export const userRouter = createTRPCRouter({
  // Throttled per client address (each call of a batch counts); "unknown" when the entry point gave none.
  signUp: publicProcedure
    .meta({ audit: { none: "creates an account and its personal workspace: no one else acts there yet, and an account is no workspace's change" } })
    .input(users.signUpInput)
    .mutation(({ ctx, input }) => users.signUpPublic(ctx.db, input, ctx.clientAddress ?? UNKNOWN_ADDRESS)),
  me: userProcedure.query(({ ctx }) =>
    ctx.db.user.findUniqueOrThrow({ where: { id: ctx.user.userId }, select: { id: true, email: true, name: true } }),
  ),
  updateProfile: userProcedure
    .meta({ audit: { none: "a person's own display name, outside every workspace" } })
    .input(z.object({ name: z.string().trim().max(100) }))
    .mutation(({ ctx, input }) =>
      ctx.db.user.update({
        where: { id: ctx.user.userId },
        data: { name: input.name || null },
        select: { id: true, email: true, name: true },
      }),
    ),
  // Every session token issued to the caller so far is refused from now on, this one included.
  signOutEverywhere: userProcedure
    .meta({ audit: { none: "ends the person's own sessions on every device, outside every workspace" } })
    .mutation(({ ctx }) => signOutEverywhere(ctx.db, ctx.user.userId)),
});
