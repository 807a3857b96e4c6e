// A generated knowledge base: products with sections of facts, and questions worded differently from
// the documents (other inflections, other words around the product's name). Each question's answer
// is a fact string that only the right chunk holds. Used by the ranking test and `bun run bench knowledge`.

const SYLLABLES = [
  "zor",
  "blax",
  "quin",
  "tel",
  "vor",
  "mek",
  "lum",
  "dra",
  "fen",
  "kosh",
  "pri",
  "nax",
  "ul",
  "bre",
  "sko",
];
const KINDS = ["blender", "kettle", "speaker", "lamp", "heater", "scale", "router", "camera", "drill", "fan"];

const SECTIONS = [
  {
    doc: (n: string, v: number) =>
      `## Battery\n\nThe ${n} runs for ${v} hours on one charge and recharges over USB-C in about two hours.`,
    question: (n: string) => `How many hours does my ${n} last before it needs charging?`,
    answer: (v: number) => `${v} hours`,
  },
  {
    doc: (n: string, v: number) =>
      `## Warranty\n\nEvery ${n} is covered against manufacturing defects for ${v} months from the date of purchase.`,
    question: (n: string) => `What is the warranty on the ${n}?`,
    answer: (v: number) => `${v} months`,
  },
  {
    doc: (n: string, v: number) =>
      `## Shipping\n\nOrders of the ${n} ship from our warehouse within ${v} business days.`,
    question: (n: string) => `When will my ${n} be shipped?`,
    answer: (v: number) => `${v} business days`,
  },
  {
    doc: (n: string, v: number) => `## Returns\n\nYou may return an unused ${n} within ${v} days for a full refund.`,
    question: (n: string) => `Can I get refunded if I send back the ${n}?`,
    answer: (v: number) => `within ${v} days`,
  },
  {
    doc: (n: string, v: number) =>
      `## Care\n\nWipe the ${n} with a damp cloth; cleaning it at ${v} degrees or more damages the seals.`,
    question: (n: string) => `How do I clean the ${n}?`,
    answer: (v: number) => `${v} degrees`,
  },
];

const FILLER = [
  "Our support team answers calls on weekdays. Most questions about orders, returns and shipping are answered in our help center.",
  "Every product we sell is tested before it ships. Batteries are charged to half their capacity for storage.",
  "Gift cards never expire. A refund for a gift card purchase goes back to the original card.",
  "Cleaning products and spare parts are sold separately in our online store.",
  "Our warranty terms follow the law of the country of purchase. Keep your receipt.",
];

export type GeneratedQuestion = { question: string; answer: string };
export type GeneratedDocument = { title: string; content: string };

/** `products` product pages (five sections each) plus general pages, and one question per section. */
export function generateCorpus(products: number, seed = 1) {
  let state = seed;
  const random = () => {
    // 32-bit integer arithmetic: in floating point the product loses its low bits and the sequence cycles early
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const documents: GeneratedDocument[] = [];
  const questions: GeneratedQuestion[] = [];
  const used = new Set<string>();
  // three syllables give 3,375 names; larger sets (the 100k-chunk bench) take four
  const syllables = products > 2000 ? 4 : 3;
  for (let i = 0; i < products; i++) {
    let word = "";
    do {
      word = Array.from({ length: syllables }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join("");
    } while (used.has(word));
    used.add(word);
    const name = `${word[0]!.toUpperCase()}${word.slice(1)} ${KINDS[i % KINDS.length]}`;
    const sections = SECTIONS.map((s, k) => {
      const value = 100 + i * 10 + k; // unique per product and section: the answer can only come from one chunk
      questions.push({ question: s.question(name), answer: s.answer(value) });
      return s.doc(name, value);
    });
    documents.push({ title: `${name} manual`, content: `# ${name}\n\n${sections.join("\n\n")}` });
  }
  for (let i = 0; i < Math.max(5, products / 5); i++)
    documents.push({ title: `Help page ${i}`, content: FILLER.map((f, k) => `## Topic ${k}\n\n${f}`).join("\n\n") });
  return { documents, questions };
}
