import { expect, test } from "bun:test";
import { MAX_CHUNK_CHARS, chunkText } from "../../src/services/knowledge/chunk-text";
import { htmlToText } from "../../src/services/knowledge/html-to-text";

test("cuts on headings; each chunk starts with its heading", () => {
  const chunks = chunkText("Intro line.\n\n# Refunds\n\nWithin 30 days.\n\n## Shipping\n\nMondays.\n\nAnd Thursdays.");
  expect(chunks).toEqual(["Intro line.", "Refunds\n\nWithin 30 days.", "Shipping\n\nMondays.\n\nAnd Thursdays."]);
});

test("paragraphs are packed up to the bound; a long paragraph is cut at sentences with a small overlap", () => {
  const sentence = (i: number) => `Sentence number ${i} talks about the warranty terms of product ${i}.`;
  const long = Array.from({ length: 80 }, (_, i) => sentence(i)).join(" ");
  const chunks = chunkText(`# Warranty\n\n${long}`);
  expect(chunks.length).toBeGreaterThan(3);
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
    expect(chunk.startsWith("Warranty\n\n")).toBe(true);
  }
  // every sentence survives whole in some chunk, and neighbours share a little text
  for (let i = 0; i < 80; i++) expect(chunks.some((c) => c.includes(sentence(i)))).toBe(true);
  const tail = chunks[0]!.slice(-40);
  expect(chunks[1]).toContain(tail.slice(tail.indexOf(" ") + 1));
});

test("a word longer than a chunk is still cut within the bound", () => {
  for (const chunk of chunkText("x".repeat(5000))) expect(chunk.length).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
});

test("HTML: tags, scripts and styles removed; headings and paragraphs kept as boundaries; entities decoded", () => {
  const text = htmlToText(
    `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>
     <nav><a href="/">Home</a></nav><h2>Opening &amp; hours</h2><p>Mon&ndash;Fri <b>9</b>&nbsp;to 5.</p>
     <script>document.write("tracking")</script><ul><li>Closed on holidays</li></ul></body></html>`,
  );
  expect(text).not.toContain("color");
  expect(text).not.toContain("tracking");
  expect(text).not.toContain("<");
  expect(chunkText(text)).toEqual(["Home", "Opening & hours\n\nMon–Fri 9 to 5.\n\nClosed on holidays"]);
});
