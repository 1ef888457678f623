import { describe, expect, it } from "vitest";
import { costOf, priceOf } from "./pricing";

describe("pricing", () => {
  it("prices provider/model ids, bare names, dated snapshots and org-prefixed names", () => {
    expect(priceOf("openai/gpt-4o-mini")).toMatchObject({ inputPerMillion: 0.15, outputPerMillion: 0.6, known: true });
    expect(priceOf("gpt-4o")).toMatchObject({ inputPerMillion: 2.5, outputPerMillion: 10 });
    expect(priceOf("openai/gpt-4o-2024-08-06")).toMatchObject({ inputPerMillion: 2.5 });
    expect(priceOf("openai/gpt-4o-mini-2024-07-18")).toMatchObject({ inputPerMillion: 0.15 }); // longest prefix wins
    expect(priceOf("anthropic/claude-3-5-haiku-latest")).toMatchObject({ inputPerMillion: 0.8, outputPerMillion: 4 });
    expect(priceOf("openrouter/meta-llama/llama-3.1-8b-instruct")).toMatchObject({ inputPerMillion: 0.05 });
    expect(priceOf("mycorp/gpt-4o-mini")).toMatchObject({ inputPerMillion: 0.15 });
  });

  it("offline and local servers are free; unknown models are flagged", () => {
    expect(costOf("offline/extractive", 1e6, 1e6)).toBe(0);
    expect(costOf("ollama/llama3", 1e6, 1e6)).toBe(0);
    expect(priceOf("acme/secret-model")).toMatchObject({ known: false, inputPerMillion: 0 });
  });

  it("costOf uses per-million prices and workspace overrides (full id first, then bare name)", () => {
    expect(costOf("openai/gpt-4o-mini", 1_000_000, 500_000)).toBeCloseTo(0.15 + 0.3, 10);
    expect(costOf("openai/gpt-4o-mini", 1000, 1000, { "gpt-4o-mini": { inputPerMillion: 1, outputPerMillion: 2 } })).toBeCloseTo(0.003, 10);
    expect(
      costOf("openai/gpt-4o-mini", 1000, 0, { "openai/gpt-4o-mini": { inputPerMillion: 5, outputPerMillion: 0 }, "gpt-4o-mini": { inputPerMillion: 1, outputPerMillion: 0 } }),
    ).toBeCloseTo(0.005, 10);
  });
});
