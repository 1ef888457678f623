/** Synthex shim (not from mem0ai/mem0): the installed `mem0ai` package's types and enums. */
export * from "mem0ai";
