/** Synthex shim (not from mem0ai/mem0): the installed `mem0ai` package's exception classes. */
export { AuthenticationError, MemoryError, MemoryNotFoundError, MemoryQuotaExceededError, NetworkError, RateLimitError, ValidationError } from "mem0ai";
