// HTML to the plain text we chunk: scripts, styles and other non-content elements are dropped, block
// elements become paragraph breaks and headings become Markdown headings, so that the chunker cuts
// an HTML page on the same boundaries as a Markdown one.
import { Parser } from "htmlparser2";

// their text is never content a caller should hear
const SKIPPED = new Set(["script", "style", "noscript", "template", "head", "svg", "iframe", "object", "canvas"]);
const BLOCKS = new Set([
  "p",
  "div",
  "section",
  "article",
  "main",
  "header",
  "footer",
  "aside",
  "nav",
  "ul",
  "ol",
  "li",
  "table",
  "tr",
  "blockquote",
  "pre",
  "dl",
  "dt",
  "dd",
  "figure",
  "figcaption",
  "form",
  "fieldset",
  "address",
  "hr",
  "br",
]);
const HEADING = /^h([1-6])$/;

export function htmlToText(html: string): string {
  const out: string[] = [];
  let skipping = 0;
  const breakParagraph = () => out.push("\n\n");
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIPPED.has(name)) skipping++;
        else if (skipping > 0) return;
        const heading = HEADING.exec(name);
        if (heading) out.push(`\n\n${"#".repeat(Number(heading[1]))} `);
        else if (name === "br") out.push("\n");
        else if (name === "td" || name === "th") out.push(" ");
        else if (BLOCKS.has(name)) breakParagraph();
      },
      ontext(text) {
        if (skipping === 0) out.push(text.replace(/\s+/g, " "));
      },
      onclosetag(name) {
        if (SKIPPED.has(name)) skipping = Math.max(0, skipping - 1);
        else if (skipping === 0 && (HEADING.test(name) || BLOCKS.has(name))) breakParagraph();
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return out
    .join("")
    .split("\n")
    .map((line) => line.trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
