/**
 * A small file in LoCoMo's `locomo10.json` shape for tests (the real data is CC BY-NC and never
 * committed): two conversations, dated sessions, an image caption, and every evidence anomaly of
 * the official file ("D8:6; D9:17" style, "D", "D:11:26" style, an empty list).
 */
type Turn = { speaker: string; dia_id: string; text: string; blip_caption?: string };

function session(n: number, speakers: [string, string], lines: string[]): Turn[] {
  return lines.map((text, i) => ({ speaker: speakers[i % 2]!, dia_id: `D${n}:${i + 1}`, text }));
}

export function locomoFixture() {
  const a: [string, string] = ["Ann", "Ben"];
  const convA = {
    speaker_a: "Ann",
    speaker_b: "Ben",
    session_1_date_time: "1:56 pm on 8 May, 2023",
    session_1: session(1, a, [
      "I adopted a golden retriever puppy named Biscuit last week.",
      "A puppy! How is Biscuit settling in at your flat?",
      "He chews every shoe he finds, but he loves the park by the river.",
      "Ha, mine did the same. Train him with treats.",
    ]),
    session_2_date_time: "10:00 am on 20 June, 2023",
    session_2: session(2, a, [
      "Yesterday I started learning the cello at the community center.",
      "The cello is such a warm instrument. Who teaches you?",
      "A retired orchestra player named Mrs Okafor teaches the evening class.",
      "I ran the Boston marathon in April and finished in four hours.",
    ]),
    session_3_date_time: "7:15 pm on 2 August, 2023",
    session_3: [
      ...session(3, a, [
        "We moved to Lisbon for my new job at a solar energy startup.",
        "Lisbon is beautiful. Do you like the startup?",
        "I love it; we design rooftop panels for schools.",
      ]),
      { speaker: "Ben", dia_id: "D3:4", text: "Look at my garden!", blip_caption: "a photo of tomato plants in a greenhouse" },
    ],
    // LoCoMo quirk: a date key without its session.
    session_4_date_time: "9:00 am on 1 September, 2023",
  };
  const b: [string, string] = ["Cleo", "Dev"];
  const convB = {
    speaker_a: "Cleo",
    speaker_b: "Dev",
    session_1_date_time: "8:00 am on 3 March, 2023",
    session_1: session(1, b, [
      "My dog Pepper, a grey whippet, won a ribbon at the county show.",
      "Congratulations to Pepper! Whippets are so fast.",
    ]),
    session_2_date_time: "6:30 pm on 14 April, 2023",
    session_2: session(2, b, ["I am painting a mural of whales on the library wall.", "Whales on a library? Brilliant idea."]),
  };
  return [
    {
      sample_id: "conv-a",
      conversation: convA,
      qa: [
        { question: "What is the name of Ann's puppy?", answer: "Biscuit", evidence: ["D1:1"], category: 4 },
        { question: "When did Ann start learning the cello?", answer: "19 June 2023", evidence: ["D2:1"], category: 2 },
        { question: "Which pets and instruments does Ann have?", answer: "a golden retriever, a cello", evidence: ["D1:1; D2:1"], category: 1 },
        { question: "Who teaches Ann the cello?", answer: "Mrs Okafor", evidence: ["D", "D2:3"], category: 4 },
        { question: "Where did Ann move for her job?", answer: "Lisbon", evidence: ["D:3:1"], category: 4 },
        { question: "Would Ann enjoy a concert?", answer: "Probably yes; she plays the cello", evidence: [], category: 3 },
        { question: "What plants grow in Ben's greenhouse?", answer: 2023, evidence: ["D3:4"], category: 4 },
        { question: "What did Ann's puppy win at the county show?", adversarial_answer: "a ribbon", evidence: ["D1:1"], category: 5 },
      ],
    },
    {
      sample_id: "conv-b",
      conversation: convB,
      qa: [
        { question: "What kind of dog is Pepper?", answer: "a grey whippet", evidence: ["D1:1"], category: 4 },
        { question: "What is Cleo painting on the library wall?", answer: "a mural of whales", evidence: ["D2:1", "D9:9"], category: 4 },
      ],
    },
  ];
}
