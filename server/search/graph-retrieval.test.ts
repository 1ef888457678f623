import { describe, expect, it } from "vitest";
import {
  byPathRank,
  firstHop,
  frontier,
  parseBelief,
  pathScoring,
  rankSources,
  scorePath,
  secondHop,
  type Belief,
  type QuestionEntity,
} from "./graph-retrieval";
import { describePath } from "./evidence-path";
import { isTemporalQuestion, matchEntities, nameCandidates, normalizeName, questionPhrases, questionTokens } from "./question-names";

const entity = (id: string, name: string, aliases: string[] = []) => ({ id, name, aliases, type: "person" });

function belief(id: string, subject: [string, string], predicate: string, object: string, objectEntity: string | null, sources: string[], extra: Partial<Belief> = {}): Belief {
  return {
    recordId: `rec_${id}`,
    id,
    subject: subject[0],
    subjectName: subject[1],
    predicate,
    object,
    objectEntity,
    polarity: "positive",
    validFrom: "2023-05-08T00:00:00Z",
    validTo: null,
    status: "current",
    sources,
    evidence: null,
    ...extra,
  };
}

const seed = (entityId: string, name: string): QuestionEntity => ({ entityId, recordId: `rec_${entityId}`, name, type: "person", scope: "s", matched: normalizeName(name) });

describe("the question's entities", () => {
  it("strips possessives and splits on punctuation", () => {
    expect(questionTokens("Where does Alice's sister live? And James' dog?").map((t) => t.norm)).toEqual(["where", "does", "alice", "sister", "live", "and", "james", "dog"]);
    expect(questionTokens("What did Mel’s mom say?").map((t) => t.norm)).toEqual(["what", "did", "mel", "mom", "say"]);
  });

  it("looks names up by word n-grams, normalized like the SQL", () => {
    const phrases = questionPhrases(questionTokens("Did Jon go to New York?"));
    expect(phrases).toContain("new york");
    expect(phrases).toContain("jon");
    expect(phrases).toContain("did jon go to new");
    expect(phrases).not.toContain("did jon go to new york"); // longer than five words
    expect(normalizeName("  St. Louis ")).toBe("st louis");
  });

  it("matches names and aliases case-insensitively, the longest surface first", () => {
    const melanie = entity("e1", "Melanie", ["Mel"]);
    const york = entity("e2", "York");
    const newYork = entity("e3", "New York", ["NYC"]);
    const got = matchEntities(questionTokens("Did mel's friends move to new york or NYC?"), [melanie, york, newYork]);
    expect(got.map((m) => [m.entity.id, m.matched])).toEqual([
      ["e1", "mel"],
      ["e3", "new york"],
      ["e3", "nyc"],
    ]);
  });

  it("matches every entity sharing a surface (one per scope)", () => {
    const a = entity("e1", "Caroline");
    const b = entity("e2", "Caroline");
    expect(matchEntities(questionTokens("What does Caroline paint?"), [a, b]).map((m) => m.entity.id)).toEqual(["e1", "e2"]);
  });

  it("finds capitalized names the graph does not know, not question words or months", () => {
    const tokens = questionTokens("When did Zed and Alice visit New Orleans in May?");
    const alice = matchEntities(tokens, [entity("e1", "Alice")]);
    expect(nameCandidates(tokens, alice)).toEqual(["Zed", "New Orleans"]);
    expect(nameCandidates(questionTokens("What is the name of the dog?"))).toEqual([]);
  });

  it("tells temporal questions", () => {
    expect(isTemporalQuestion("When did Melanie move?")).toBe(true);
    expect(isTemporalQuestion("Where did she live before Boston?")).toBe(true);
    expect(isTemporalQuestion("What does Melanie paint?")).toBe(false);
  });
});

describe("beliefs", () => {
  it("reads the contract's belief shape and refuses what lacks its fields", () => {
    const raw = { id: "bel_1", subject: "e1", subjectName: "Bob", predicate: "lives in", object: "Lisbon", objectEntity: null, status: "superseded", supersededBy: "bel_2", sources: ["t1", 3] };
    expect(parseBelief("r1", JSON.stringify(raw))).toMatchObject({ recordId: "r1", id: "bel_1", status: "superseded", sources: ["t1"], evidence: null });
    expect(parseBelief("r1", { id: "bel_1", predicate: "likes" })).toBeNull();
    expect(parseBelief("r1", null)).toBeNull();
  });

  it("scores stated relations above co-mentions, current above superseded (except in temporal questions)", () => {
    const scoring = pathScoring("Where does Bob live?", ["bob"]);
    const lives = belief("b1", ["e1", "Bob"], "lives in", "Lisbon", null, ["t1"]);
    const old = { ...lives, id: "b0", status: "superseded" as const };
    const co = belief("b2", ["e1", "Bob"], "mentioned with", "Alice", "e2", ["t2"]);
    expect(scorePath([lives], scoring)).toBe(1);
    expect(scorePath([old], scoring)).toBeLessThan(scorePath([lives], scoring));
    expect(scorePath([co], scoring)).toBeLessThan(scorePath([old], scoring));
    const temporal = pathScoring("Where did Bob live before?", ["bob"]);
    expect(scorePath([old], temporal)).toBeGreaterThan(scorePath([old], scoring));
  });
});

describe("hops", () => {
  // Alice —mentioned with→ Bob (her sister); Bob —lives in→ Lisbon (a turn that never names Alice).
  const alice = seed("eA", "Alice");
  const sister = belief("b1", ["eA", "Alice"], "mentioned with", "Bob", "eB", ["turn-sister"], { evidence: "My sister Bob is coming over." });
  const likes = belief("b2", ["eA", "Alice"], "likes", "pottery", null, ["turn-pottery"]);
  const bobLives = belief("b3", ["eB", "Bob"], "lives in", "Lisbon", null, ["turn-lisbon"]);
  const bobOld = belief("b4", ["eB", "Bob"], "lives in", "Porto", null, ["turn-porto"], { status: "superseded", validTo: "2023-06-01T00:00:00Z" });
  const backToAlice = belief("b5", ["eB", "Bob"], "mentioned with", "Alice", "eA", ["turn-sister"]);
  const question = "Where does the sister of Alice live?";
  const scoring = pathScoring(question, ["alice"]);

  it("walks one hop from the question's entity, then two through the entities it reaches", () => {
    const hop1 = firstHop([alice], [sister, likes], scoring);
    expect(hop1.map((w) => w.edges.map((b) => b.id))).toEqual([["b1"], ["b2"]]);
    const front = frontier(hop1, [alice]);
    expect([...front.keys()]).toEqual(["eB"]);
    const hop2 = secondHop(front, [bobLives, bobOld, backToAlice], [alice], scoring);
    // The belief back to the question's entity is a one-hop path already, not a second hop.
    expect(hop2.map((w) => w.edges.map((b) => b.id))).toEqual([
      ["b1", "b3"],
      ["b1", "b4"],
    ]);
    const ranked = rankSources([...hop1, ...hop2], 1).sort((a, b) => b.score - a.score);
    const lisbon = ranked.find((r) => r.id === "turn-lisbon")!;
    expect(lisbon.score).toBeGreaterThan(ranked.find((r) => r.id === "turn-porto")!.score);
    expect(lisbon.score).toBeGreaterThan(ranked.find((r) => r.id === "turn-pottery")!.score);
    // The evidence path: question entity → belief → entity → belief → source record.
    expect(lisbon.paths[0]).toMatchObject({
      from: { entityId: "eA", name: "Alice", matched: "alice" },
      sourceId: "turn-lisbon",
      edges: [
        { beliefId: "b1", subject: "eA", predicate: "mentioned with", objectEntity: "eB" },
        { beliefId: "b3", subject: "eB", predicate: "lives in", object: "Lisbon", status: "current" },
      ],
    });
    expect(describePath(lisbon.paths[0]!)).toBe("Alice —mentioned with→ Bob (since 2023-05-08) ⇒ Bob —lives in→ Lisbon (since 2023-05-08)");
  });

  it("expands from at most n entities, the best-connected to the question first", () => {
    const other = belief("b6", ["eA", "Alice"], "mentioned with", "Carl", "eC", ["turn-carl"]);
    const hop1 = firstHop([alice], [other, sister], scoring);
    expect([...frontier(hop1, [alice], 1).keys()]).toEqual(["eB"]); // b1's sentence says "sister"
  });

  it("lists equal paths to a record by what they say, whatever their belief ids (which carry random record ids) or the order they were read in", () => {
    // Two beliefs of equal score citing the same turn; the one whose id sorts first says the later thing.
    const watercolour = belief("bel_0001", ["eA", "Alice"], "likes", "watercolour", null, ["turn-hobbies"]);
    const pottery = belief("bel_ffff", ["eA", "Alice"], "likes", "pottery", null, ["turn-hobbies"]);
    const read = (list: Belief[]) => rankSources(firstHop([alice], list, scoring), 1).find((r) => r.id === "turn-hobbies")!;
    const forward = read([watercolour, pottery]);
    const backward = read([pottery, watercolour]);
    expect(forward.paths[0]!.score).toBe(forward.paths[1]!.score);
    expect(forward.paths.map((p) => p.edges[0]!.object)).toEqual(["pottery", "watercolour"]);
    expect(backward.paths).toEqual(forward.paths);
    // The same rule merges the paths of the records a source stands for.
    expect([...backward.paths].reverse().sort(byPathRank)).toEqual(forward.paths);
  });

  it("ranks a record reached from more of the question's entities higher", () => {
    const bob = seed("eB", "Bob");
    const scoring2 = pathScoring("Did Alice and Bob meet?", ["alice", "bob"], ["eA", "eB"]);
    const both = firstHop([alice, bob], [sister], scoring2);
    const one = firstHop([alice, bob], [likes], scoring2);
    const ranked = rankSources([...both, ...one], 2);
    expect(ranked.find((r) => r.id === "turn-sister")!.score).toBeGreaterThan(ranked.find((r) => r.id === "turn-pottery")!.score);
  });
});
