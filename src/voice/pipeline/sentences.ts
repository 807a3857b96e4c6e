// Cuts streamed LLM text into sentences for TTS: each goes out as soon as it is complete, so speech
// starts after the first sentence rather than after the whole answer. Very short ones wait for more.
const boundary = /[.!?…;:]+["')\]]*\s+|\n+/g;
const minLength = 12;

export class SentenceSplitter {
  private buffer = "";

  /** Adds a fragment; returns the sentences it completed. */
  push(fragment: string): string[] {
    this.buffer += fragment;
    const out: string[] = [];
    let cut = 0;
    for (const match of this.buffer.matchAll(boundary)) {
      const end = (match.index ?? 0) + match[0].length;
      if (end - cut < minLength) continue;
      const sentence = this.buffer.slice(cut, end).trim();
      if (sentence) out.push(sentence);
      cut = end;
    }
    this.buffer = this.buffer.slice(cut);
    return out;
  }

  /** What is left at the end of the stream. */
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = "";
    return rest || null;
  }
}
