// What a wire format needs of a websocket, so the formats can be driven by any socket (Bun's, tests').
export interface WireSocket {
  sendText(text: string): void;
  sendBinary(bytes: Uint8Array): void;
  close(code: number, reason: string): void;
}

/** A wire format's handlers for one connection. */
export interface WireProtocol {
  onOpen(): void;
  onMessage(message: string | Buffer): void;
  onClose(): void;
}
