// A document's text from what was uploaded: HTML loses its markup, Markdown and plain text stay as
// they are (the chunker reads Markdown headings).
import { badRequest } from "../../errors";
import { htmlToText } from "./html-to-text";

export type DocumentFormat = "text/plain" | "text/markdown" | "text/html" | "application/json";

export function documentText(content: string, format: DocumentFormat): string {
  // a NUL byte or a run of control characters means binary content sent as text
  if (content.includes("\u0000") || controlShare(content) > 0.01)
    throw badRequest("content", "not text: the document holds binary data");
  const text =
    format === "text/html" || (format === "application/json" && looksLikeHtml(content)) ? htmlToText(content) : content;
  if (text.trim() === "") throw badRequest("content", "holds no text");
  return text;
}

const looksLikeHtml = (content: string) => /^\s*(<!doctype html|<html[\s>])/i.test(content);

function controlShare(text: string): number {
  if (text.length === 0) return 0;
  const sample = text.slice(0, 64 * 1024);
  let controls = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    // tab, line feed, vertical tab, form feed and carriage return are text
    if (c < 0x20 ? c < 0x09 || c > 0x0d : c === 0x7f) controls++;
  }
  return controls / sample.length;
}
