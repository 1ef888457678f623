/**
 * One app server in a process of its own (the route server of route-server.ts on DATABASE_URL),
 * for tests that need several app servers sharing one database: prints `LISTENING <url>` once it
 * answers, and serves until it is killed.
 */
import { startRouteServer } from "./route-server";

const server = await startRouteServer();
console.log(`LISTENING ${server.url}`);
