/** A failure the user caused and can fix. The API layer maps `code` to its own status codes. */
export type DomainErrorCode = "BAD_REQUEST" | "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "TOO_MANY_REQUESTS";

export class DomainError extends Error {
  constructor(
    public readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const badRequest = (message: string) => new DomainError("BAD_REQUEST", message);
export const notFound = (message: string) => new DomainError("NOT_FOUND", message);
export const forbidden = (message: string) => new DomainError("FORBIDDEN", message);
export const conflict = (message: string) => new DomainError("CONFLICT", message);
export const tooManyRequests = (message: string) => new DomainError("TOO_MANY_REQUESTS", message);
