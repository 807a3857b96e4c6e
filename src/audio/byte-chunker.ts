// Gathers a stream of bytes into chunks of one size, so that a provider gets fewer, larger messages.

export class ByteChunker {
  private readonly buffer: Uint8Array;
  private filled = 0;

  /** chunkBytes 0 passes every push through as it is. */
  constructor(readonly chunkBytes: number) {
    this.buffer = new Uint8Array(chunkBytes);
  }

  /** Adds bytes; emit gets each chunk that fills up (a view, valid only during the call). */
  push(bytes: Uint8Array, emit: (chunk: Uint8Array) => void) {
    if (this.chunkBytes === 0) return emit(bytes);
    let offset = 0;
    while (offset < bytes.length) {
      const n = Math.min(this.chunkBytes - this.filled, bytes.length - offset);
      this.buffer.set(bytes.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === this.chunkBytes) {
        this.filled = 0;
        emit(this.buffer);
      }
    }
  }
}
