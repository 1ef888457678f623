/**
 * Synthex shim (not from mem0ai/mem0): Mem0's tests import `../../mem0`, the SDK's source in
 * their repository. Here it is the installed `mem0ai` package's MemoryClient, with its host taken
 * from MEM0_HOST (the tests pass only `apiKey`): the one connection setting the runner changes.
 */
import { MemoryClient as Mem0Client } from "mem0ai";

type Options = ConstructorParameters<typeof Mem0Client>[0];

export class MemoryClient extends Mem0Client {
  constructor(options: Options) {
    super({ ...options, host: options.host ?? process.env.MEM0_HOST });
  }
}
