/** Inputs shared by the CLI tests (embedded database and PostgreSQL). */

function node(id: string, parent: string | null, children: string[], role: string | null, text: string | null, time: number) {
  return {
    id,
    parent,
    children,
    message: role
      ? { id, author: { role }, create_time: time, content: { content_type: "text", parts: [text] }, metadata: {}, recipient: "all" }
      : null,
  };
}

/** A small ChatGPT export: one conversation per (month, topic), one of them with a planted phrase. */
export function chatgptExport() {
  const topics = [
    ["2024-01-10", "Rust lifetimes", "How do lifetimes work in Rust?", "Lifetimes tell the borrow checker how long references live."],
    ["2024-01-20", "Kayak trip", "I bought a zebra-striped kayak for the lake.", "A zebra-striped kayak sounds fun; remember a life vest."],
    ["2024-02-05", "Sourdough", "My sourdough starter smells like acetone.", "Feed the starter more often to fix the acetone smell."],
  ];
  return topics.map(([day, title, question, answer], i) => {
    const t = Date.parse(`${day}T12:00:00Z`) / 1000;
    return {
      id: `conv-${i}`,
      title,
      create_time: t,
      update_time: t + 60,
      current_node: `a${i}`,
      mapping: {
        [`root${i}`]: node(`root${i}`, null, [`q${i}`], null, null, t),
        [`q${i}`]: node(`q${i}`, `root${i}`, [`a${i}`], "user", question!, t),
        [`a${i}`]: node(`a${i}`, `q${i}`, [], "assistant", answer!, t + 30),
      },
    };
  });
}
