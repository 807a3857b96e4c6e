import { describe, expect, test } from "bun:test";
import { ByteChunker } from "../../src/audio/byte-chunker";

const bytes = (from: number, length: number) => Uint8Array.from({ length }, (_, i) => (from + i) & 0xff);

describe("ByteChunker", () => {
  test("emits chunks of exactly its size, in order, across pushes of any size", () => {
    const chunker = new ByteChunker(100);
    const out: number[][] = [];
    const emit = (chunk: Uint8Array) => out.push([...chunk]);
    chunker.push(bytes(0, 30), emit);
    expect(out).toHaveLength(0);
    chunker.push(bytes(30, 150), emit); // completes one chunk and leaves 80 bytes
    expect(out).toHaveLength(1);
    chunker.push(bytes(180, 220), emit); // one push spanning two chunks
    expect(out.map((c) => c.length)).toEqual([100, 100, 100, 100]);
    expect(out.flat()).toEqual([...bytes(0, 400)]);
  });

  test("size 0 passes every push through", () => {
    const chunker = new ByteChunker(0);
    const out: Uint8Array[] = [];
    const frame = bytes(7, 160);
    chunker.push(frame, (c) => out.push(c));
    expect(out).toEqual([frame]);
  });
});
