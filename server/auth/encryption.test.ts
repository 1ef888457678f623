import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, keyPreview, redact } from "./encryption";

describe("encryption at rest", () => {
  it("round-trips with AES-256-GCM and a fresh IV each time", () => {
    const a = encryptSecret("sk-abcdef0123456789", "server-secret");
    const b = encryptSecret("sk-abcdef0123456789", "server-secret");
    expect(a).not.toBe(b);
    expect(a).not.toContain("abcdef");
    expect(a).toMatch(/^v1\./);
    expect(decryptSecret(a, "server-secret")).toBe("sk-abcdef0123456789");
  });

  it("fails cleanly (without the plaintext) on a wrong secret or tampering", () => {
    const enc = encryptSecret("sk-abcdef0123456789", "server-secret");
    expect(() => decryptSecret(enc, "other-secret")).toThrow(/server secret .* has changed/);
    const parts = enc.split(".");
    parts[3] = Buffer.from("tampered").toString("base64url");
    expect(() => decryptSecret(parts.join("."), "server-secret")).toThrow(/Could not decrypt/);
    expect(() => decryptSecret("garbage", "server-secret")).toThrow(/unknown format/);
  });

  it("previews and redacts", () => {
    expect(keyPreview("sk-abcdef0123456789")).toBe("sk-…6789");
    expect(keyPreview("short")).toBe("••••");
    expect(redact("bad key sk-abcdef0123456789 sent", ["sk-abcdef0123456789", null])).toBe("bad key [redacted] sent");
  });
});
