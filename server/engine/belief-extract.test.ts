import { describe, expect, it } from "vitest";
import { beliefSentence, CO_MENTION, extractBeliefs, type BeliefSource } from "./belief-extract";
import { entityLookup, extractMentions, lowercaseWords, resolveEntities } from "./entity-extract";
import { detectInsights } from "./insight-detect";

const SCOPE = "locomo:conv-test";
const t = (day: string) => `2023-${day}T12:00:00.000Z`;
const src = (recordId: string, time: string | null, content: string): BeliefSource => ({ recordId, time, learnedAt: "2024-01-01T00:00:00.000Z", content });

function graph(sources: BeliefSource[]) {
  const mentions = sources.map((s) => ({ recordId: s.recordId, time: s.time, mentions: extractMentions(s.content) }));
  const entities = resolveEntities(SCOPE, mentions, undefined, { lowercaseWords: lowercaseWords(sources.map((s) => s.content)) });
  const index = { lookup: entityLookup(entities), names: new Map(entities.map((e) => [e.id, e.name])), forms: entities.flatMap((e) => [e.name, ...e.aliases]) };
  const beliefs = extractBeliefs(SCOPE, sources, index);
  return { entities, beliefs, idOf: (name: string) => entities.find((e) => e.name === name)!.id };
}

describe("beliefs", () => {
  it("a later source supersedes a functional fact: both beliefs kept, with valid and learned times", () => {
    const { beliefs, idOf } = graph([
      src("t1", t("05-08"), "Melanie: I just moved to Boston with my kids."),
      src("t2", t("06-20"), "Melanie: I live in Boston now, it's lovely."),
      src("t3", t("08-14"), "Melanie: Big news, I moved to Seattle last week!"),
    ]);
    const lives = beliefs.filter((b) => b.predicate === "lives in").sort((a, b) => (a.validFrom! < b.validFrom! ? -1 : 1));
    expect(lives).toHaveLength(2);
    const [boston, seattle] = lives as [(typeof lives)[0], (typeof lives)[0]];
    expect(boston).toMatchObject({
      subject: idOf("Melanie"),
      subjectName: "Melanie",
      object: "Boston",
      polarity: "positive",
      validFrom: t("05-08"),
      validTo: t("08-14"),
      learnedAt: "2024-01-01T00:00:00.000Z",
      status: "superseded",
      supersededBy: seattle.id,
      supersedes: null,
      functional: true,
      // The restatement in June is a second source of the same belief, not a new one.
      sources: ["t1", "t2"],
    });
    expect(seattle).toMatchObject({ object: "Seattle", validFrom: t("08-14"), validTo: null, status: "current", supersedes: boston.id, supersededBy: null, sources: ["t3"] });
    expect(beliefSentence(boston)).toBe("Melanie — lives in — Boston (from 2023-05-08, superseded 2023-08-14): “I just moved to Boston with my kids.”");
  });

  it("a non-functional predicate keeps several objects; a later negation supersedes the same object", () => {
    const { beliefs } = graph([
      src("t1", t("05-08"), "Caroline: I love painting and I love hiking."),
      src("t2", t("09-01"), "Caroline: Honestly I don't like painting anymore."),
    ]);
    const likes = beliefs.filter((b) => b.predicate === "likes");
    const painting = likes.filter((b) => b.object === "painting");
    expect(likes.find((b) => b.object === "hiking")).toMatchObject({ status: "current", polarity: "positive" });
    expect(painting.map((b) => [b.polarity, b.status])).toEqual(
      expect.arrayContaining([
        ["positive", "superseded"],
        ["negative", "current"],
      ]),
    );
  });

  it("names other than the speaker are subjects too, and an object that is an entity is an edge between entities", () => {
    const { beliefs, idOf } = graph([src("t1", t("05-08"), "Caroline: Melanie works at Riverside Library these days. Oscar is my dog.")]);
    expect(beliefs.find((b) => b.predicate === "works at")).toMatchObject({ subject: idOf("Melanie"), object: "Riverside Library", objectEntity: idOf("Riverside Library") });
    const co = beliefs.filter((b) => b.predicate === CO_MENTION);
    // Caroline (the speaker), Melanie, Riverside Library and Oscar: every pair, once.
    expect(co).toHaveLength(6);
    expect(co.every((b) => b.objectEntity && b.sources.length === 1 && b.count === 1)).toBe(true);
  });

  it("is deterministic: the same sources give the same beliefs and ids", () => {
    const sources = [src("t1", t("05-08"), "Jon: I work at Door Dash."), src("t2", t("07-01"), "Jon: I work at a dance studio now.")];
    expect(graph(sources).beliefs).toEqual(graph([...sources].reverse()).beliefs);
  });
});

describe("insights", () => {
  it("contradiction: two current beliefs of one slot that disagree, from the same time or no time", () => {
    const { beliefs, entities, idOf } = graph([
      src("t1", t("05-08"), "Gina: I live in Rome."),
      src("t2", t("05-08"), "Gina: I live in Paris, actually."),
      src("t3", null, "Gina: I love jazz."),
      src("t4", null, "Gina: I don't like jazz."),
      src("t5", t("06-01"), "Gina: I work at Zara."),
      src("t6", t("07-01"), "Gina: I work at Mango."),
    ]);
    const contradictions = detectInsights(SCOPE, beliefs, entities).filter((i) => i.kind === "contradiction");
    expect(contradictions).toHaveLength(2);
    expect(contradictions.map((c) => c.title).sort()).toEqual([
      expect.stringMatching(/^Contradiction: Gina — (not )?likes — jazz \(undated\) vs Gina — (not )?likes — jazz \(undated\)$/),
      expect.stringMatching(/^Contradiction: Gina — lives in — (Rome|Paris) \(2023-05-08\) vs Gina — lives in — (Rome|Paris) \(2023-05-08\)$/),
    ]);
    const places = contradictions.find((c) => c.title.includes("lives in"))!;
    expect(places).toMatchObject({ entities: expect.arrayContaining([idOf("Gina")]), period: null, detectedAt: t("05-08") });
    expect(places.beliefs).toHaveLength(2);
    // Zara then Mango is a change over time (supersession), not a contradiction.
    expect(contradictions.some((c) => c.title.includes("works at"))).toBe(false);
  });

  it("connections once per pair, digests per month with mentions and changed beliefs", () => {
    const { beliefs, entities, idOf } = graph([
      src("t1", t("05-08"), "Melanie: Caroline and I went to the Louvre."),
      src("t2", t("05-20"), "Melanie: Caroline called again."),
      src("t3", t("08-14"), "Melanie: I moved to Boston."),
      src("t4", t("09-02"), "Melanie: I moved to Denver."),
    ]);
    const insights = detectInsights(SCOPE, beliefs, entities);
    const connection = insights.filter((i) => i.kind === "connection" && i.entities.includes(idOf("Caroline")) && i.entities.includes(idOf("Melanie")));
    expect(connection).toHaveLength(1);
    expect(connection[0]!.detectedAt).toBe(t("05-08"));
    const digests = insights.filter((i) => i.kind === "digest").sort((a, b) => (a.period! < b.period! ? -1 : 1));
    expect(digests.map((d) => d.period)).toEqual(["2023-05", "2023-08", "2023-09"]);
    expect(digests[0]!.title).toMatch(/^Digest 2023-05: (Melanie 2×, Caroline 2×|Caroline 2×, Melanie 2×), Louvre 1×; 1 new belief, 0 changed$/);
    expect(digests[2]!.title).toMatch(/1 new belief, 1 changed$/);
    // Same graph, same insights.
    expect(detectInsights(SCOPE, beliefs, entities)).toEqual(insights);
  });
});
