import { describe, expect, it } from "vitest";
import { TEMPLATES } from "./index";
import { GOOD_FOR } from "./good-for";

describe("template cards", () => {
  it("say what every template is good for, without design-doc jargon", () => {
    expect(Object.keys(GOOD_FOR).sort()).toEqual(TEMPLATES.map((t) => t.id).sort());
    for (const text of Object.values(GOOD_FOR)) expect(text).not.toMatch(/seed|differs|Graphiti|\b\d{3}\b/i);
  });
});
