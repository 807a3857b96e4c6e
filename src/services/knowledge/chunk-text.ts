// Cuts a document's text into chunks a search can return whole: on headings first, then paragraphs,
// each chunk at most MAX_CHUNK_CHARS, with a short overlap between the pieces of one section so that
// a sentence cut at a boundary is still found whole on one side. Each chunk starts with its section's
// heading: a chunk is what the LLM reads, and the heading says what it is about.

/** Retell's default maximum; hosted knowledge bases chunk at about 400–2000 characters. */
export const MAX_CHUNK_CHARS = 1200;
export const OVERLAP_CHARS = 150;

const HEADING_LINE = /^(#{1,6})\s+(.+?)\s*#*\s*$/;

type Section = { heading: string | null; paragraphs: string[] };

export function chunkText(text: string): string[] {
  const chunks: string[] = [];
  for (const section of sectionsOf(text)) chunks.push(...chunkSection(section));
  return chunks;
}

function sectionsOf(text: string): Section[] {
  const sections: Section[] = [{ heading: null, paragraphs: [] }];
  let paragraph: string[] = [];
  const closeParagraph = () => {
    const joined = paragraph.join(" ").replace(/\s+/g, " ").trim();
    if (joined) sections.at(-1)!.paragraphs.push(joined);
    paragraph = [];
  };
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    const heading = HEADING_LINE.exec(line.trim());
    if (heading) {
      closeParagraph();
      sections.push({ heading: heading[2]!, paragraphs: [] });
    } else if (line.trim() === "") closeParagraph();
    else paragraph.push(line.trim());
  }
  closeParagraph();
  return sections.filter((s) => s.paragraphs.length > 0 || s.heading !== null);
}

function chunkSection({ heading, paragraphs }: Section): string[] {
  const prefix = heading ? `${heading}\n\n` : "";
  const room = Math.max(200, MAX_CHUNK_CHARS - prefix.length);
  // a heading with no text under it is still worth finding
  if (paragraphs.length === 0) return heading ? [heading] : [];
  // pieces of a long paragraph leave room for the overlap carried into the next chunk
  const pieces = paragraphs.flatMap((p) => splitLong(p, room - OVERLAP_CHARS - 2));
  const bodies: string[] = [];
  let current = "";
  for (const piece of pieces) {
    if (current && current.length + 2 + piece.length > room) {
      bodies.push(current);
      const overlap = tailOf(current, OVERLAP_CHARS);
      current = overlap && overlap.length + 2 + piece.length <= room ? `${overlap}\n\n${piece}` : piece;
    } else current = current ? `${current}\n\n${piece}` : piece;
  }
  if (current) bodies.push(current);
  return bodies.map((body) => prefix + body);
}

/** A paragraph longer than `room` cut at sentence ends, then at spaces, then anywhere. */
function splitLong(paragraph: string, room: number): string[] {
  if (paragraph.length <= room) return [paragraph];
  const sentences = paragraph.match(/[^.!?]+(?:[.!?]+["')\]]*\s*|$)/g) ?? [paragraph];
  const out: string[] = [];
  let current = "";
  for (const raw of sentences) {
    for (const sentence of hardSplit(raw.trim(), room)) {
      if (current && current.length + 1 + sentence.length > room) {
        out.push(current);
        current = sentence;
      } else current = current ? `${current} ${sentence}` : sentence;
    }
  }
  if (current) out.push(current);
  return out;
}

function hardSplit(text: string, room: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > room) {
    const space = rest.lastIndexOf(" ", room);
    const cut = space > room / 2 ? space : room;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/** The last whole words of `text` within `max` characters (the overlap carried into the next chunk). */
function tailOf(text: string, max: number): string {
  if (text.length <= max) return "";
  const tail = text.slice(-max);
  const space = tail.indexOf(" ");
  return space >= 0 ? tail.slice(space + 1).trim() : "";
}
