/**
 * The Inngest client. Configuration comes from the environment, read by the SDK itself:
 * `INNGEST_DEV=1` (local dev server), or `INNGEST_EVENT_KEY` + `INNGEST_SIGNING_KEY`
 * (Inngest Cloud), plus `INNGEST_BASE_URL` for a self-hosted server. See docs/operations.md,
 * "Scale-out with Inngest".
 */
import { Inngest } from "inngest";

export const inngest = new Inngest({ id: "synthex" });

export { evalRequested, runCancelled, runRequested, sourceAppended, synthexEvents } from "./events";
