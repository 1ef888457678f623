/** `npm run client:generate`: writes client/openapi.ts (the REST API's types) from the live OpenAPI document. */
import { writeFileSync } from "node:fs";
import { CLIENT_TYPES_PATH, generateClientTypes } from "../server/api/client-types";

writeFileSync(CLIENT_TYPES_PATH, await generateClientTypes());
console.log(`wrote ${CLIENT_TYPES_PATH}`);
