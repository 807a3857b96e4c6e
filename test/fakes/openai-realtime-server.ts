// A local stand-in for an OpenAI Realtime provider: a real websocket server on 127.0.0.1 speaking
// the wire protocol (beta event names, or GA names for audio and transcripts), with server VAD
// simulated from audio energy and a script instead of a model. Used by the voice, bridge and bench
// tests; it keeps no audio, so many concurrent sessions stay cheap.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { base64ToPcm } from "../../src/audio/pcm";
import { EnergyVad } from "./energy-vad";
import { type EventNaming, type FakeReply, newId, type ResponseStream, streamResponse } from "./realtime-responses";

export type { FakeReply, FakeToolCall } from "./realtime-responses";

export type ToolOutput = { callId: string; name: string; output: string };
export type ReplyContext = { userText: string | null; instructions: string | null; toolOutputs: ToolOutput[] };
export type FakeTurn = { userSays: string; reply: FakeReply | ((context: ReplyContext) => FakeReply) };

export type FakeRealtimeOptions = {
  /** Caller turns in order: each committed user turn (VAD, commit, or a text message) takes the next. */
  turns?: FakeTurn[];
  /** The reply once tool outputs came back; by default it quotes them: "name: output; ...". */
  afterToolOutputs?: (context: ReplyContext) => FakeReply;
  /** The reply to a response.create carrying instructions (the greeting); by default it says them. */
  onInstructions?: (instructions: string) => FakeReply;
  /** Stream reply audio in real time (like a provider) instead of all at once. Default false. */
  realtime?: boolean;
  chunkMs?: number;
  naming?: EventNaming;
  /** RMS (16-bit scale) above which input counts as speech. */
  speechThreshold?: number;
};

type ClientEvent = { type: string; [key: string]: any };

export class FakeRealtimeSession {
  /** Every client event, with audio payloads replaced by their byte count. */
  readonly received: ClientEvent[] = [];
  readonly toolOutputs: ToolOutput[] = [];
  audioBytesReceived = 0;
  session: Record<string, any> = {
    id: newId("sess"), object: "realtime.session", model: "fake", modalities: ["text", "audio"], voice: "alloy",
    input_audio_format: "pcm16", output_audio_format: "pcm16",
    turn_detection: { type: "server_vad", threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500, create_response: true },
  };
  private turn = 0;
  private buffered = 0; // samples in the input buffer since the last commit
  private readonly vad: EnergyVad;
  private itemId = newId("item");
  private pendingOutputs: ToolOutput[] = [];
  private pendingUserText: string | null = null;
  private readonly calls = new Map<string, string>();
  private active: ResponseStream | null = null;
  private readonly waiters: { type: string; index: number; resolve: (e: ClientEvent) => void }[] = [];
  private readonly consumed = new Map<string, number>();

  constructor(
    readonly ws: WebSocket,
    readonly request: { url: string; headers: IncomingMessage["headers"] },
    private readonly options: FakeRealtimeOptions,
  ) {
    this.vad = new EnergyVad(24_000, options.speechThreshold ?? 500);
    ws.on("message", (data) => this.onMessage(JSON.parse(data.toString())));
    this.send({ type: "session.created", session: this.session });
  }

  send(event: Record<string, unknown>) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify({ event_id: newId("event"), ...event }));
  }

  /** Cuts the TCP connection without a close frame, like a crashed provider. */
  drop() {
    this.ws.terminate();
  }

  /** Resolves with the client events of `type` one by one, in order: the first call gets the first. */
  waitFor(type: string): Promise<ClientEvent> {
    const index = this.consumed.get(type) ?? 0;
    this.consumed.set(type, index + 1);
    return new Promise((resolve) => {
      this.waiters.push({ type, index, resolve });
      this.wake();
    });
  }

  private wake() {
    for (const waiter of [...this.waiters]) {
      const match = this.received.filter((e) => e.type === waiter.type)[waiter.index];
      if (!match) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(match);
    }
  }

  private record(event: ClientEvent) {
    this.received.push(event.type === "input_audio_buffer.append" ? { type: event.type, bytes: event.audio.length * 0.75 } : event);
    if (this.waiters.length) this.wake();
  }

  private onMessage(event: ClientEvent) {
    this.record(event);
    switch (event.type) {
      case "session.update":
        this.session = { ...this.session, ...event.session };
        return this.send({ type: "session.updated", session: this.session });
      case "input_audio_buffer.append":
        return this.onAudio(base64ToPcm(event.audio));
      case "input_audio_buffer.commit":
        if (this.buffered === 0) return this.error("input_audio_buffer_commit_empty", "buffer is empty");
        return this.commit(false);
      case "input_audio_buffer.clear":
        this.buffered = 0;
        return this.send({ type: "input_audio_buffer.cleared" });
      case "conversation.item.create":
        return this.onItem(event.item);
      case "response.create":
        return this.onResponseCreate(event.response ?? {});
      case "response.cancel":
        if (this.active) this.active.cancelled = true;
        return;
      default:
        return this.error("invalid_event", `unknown event type ${event.type}`);
    }
  }

  private onAudio(samples: Int16Array) {
    this.audioBytesReceived += samples.length * 2;
    this.buffered += samples.length;
    const settings = this.session.turn_detection;
    const change = settings ? this.vad.feed(samples, settings) : null;
    if (change?.type === "speech_started") {
      this.send({ type: "input_audio_buffer.speech_started", audio_start_ms: change.audioStartMs, item_id: this.itemId });
      if (this.active && settings.interrupt_response !== false) this.active.cancelled = true;
    } else if (change?.type === "speech_stopped") {
      this.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: change.audioEndMs, item_id: this.itemId });
      this.commit(settings.create_response !== false);
    }
  }

  private commit(respond: boolean) {
    const item = { id: this.itemId, object: "realtime.item", type: "message", role: "user", status: "completed", content: [{ type: "input_audio", transcript: null }] };
    this.buffered = 0;
    this.itemId = newId("item");
    this.send({ type: "input_audio_buffer.committed", previous_item_id: null, item_id: item.id });
    this.send({ type: "conversation.item.created", previous_item_id: null, item });
    const turn = this.options.turns?.[this.turn];
    const transcript = turn?.userSays ?? "";
    this.send({ type: "conversation.item.input_audio_transcription.completed", item_id: item.id, content_index: 0, transcript });
    if (respond) this.respond(this.takeTurnReply(transcript));
  }

  private onItem(item: Record<string, any>) {
    const id = item.id ?? newId("item");
    if (item.type === "function_call_output") {
      const output = { callId: item.call_id, name: this.calls.get(item.call_id) ?? "unknown", output: item.output };
      this.toolOutputs.push(output);
      this.pendingOutputs.push(output);
    } else if (item.type === "message" && item.role === "user") {
      this.pendingUserText = (item.content ?? []).map((c: any) => c.text ?? "").join(" ");
    }
    this.send({ type: "conversation.item.created", previous_item_id: null, item: { ...item, id, object: "realtime.item", status: "completed" } });
  }

  private onResponseCreate(response: Record<string, any>) {
    if (typeof response.instructions === "string") {
      return this.respond(this.options.onInstructions?.(response.instructions) ?? { text: response.instructions });
    }
    if (this.pendingOutputs.length) {
      const context = { userText: null, instructions: null, toolOutputs: this.pendingOutputs };
      this.pendingOutputs = [];
      const quote = { text: context.toolOutputs.map((o) => `${o.name}: ${o.output}`).join("; ") };
      return this.respond(this.options.afterToolOutputs?.(context) ?? quote);
    }
    const userText = this.pendingUserText;
    this.pendingUserText = null;
    this.respond(this.takeTurnReply(userText));
  }

  private takeTurnReply(userText: string | null): FakeReply {
    const turn = this.options.turns?.[this.turn++];
    if (!turn) return { text: "Sorry, I have nothing scripted to say." };
    const context = { userText, instructions: null, toolOutputs: [] };
    return typeof turn.reply === "function" ? turn.reply(context) : turn.reply;
  }

  private respond(reply: FakeReply) {
    if (this.active) this.active.cancelled = true; // one response at a time, as the provider does
    const stream: ResponseStream = { id: newId("resp"), cancelled: false, calls: this.calls };
    this.active = stream;
    const pacing = { realtime: this.options.realtime ?? false, chunkMs: this.options.chunkMs ?? 100 };
    void streamResponse((e) => this.send(e), stream, reply, this.options.naming ?? "beta", pacing).finally(() => {
      if (this.active === stream) this.active = null;
    });
  }

  private error(code: string, message: string) {
    this.send({ type: "error", error: { type: "invalid_request_error", code, message, param: null } });
  }
}

export type FakeRealtimeServer = {
  /** ws:// URL of the realtime endpoint (any path is accepted). */
  url: string;
  sessions: FakeRealtimeSession[];
  /** Resolves with the next session to connect (or the latest one not yet taken). */
  nextSession(): Promise<FakeRealtimeSession>;
  close(): Promise<void>;
};

export async function startFakeRealtimeServer(options: FakeRealtimeOptions = {}): Promise<FakeRealtimeServer> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server: http });
  const sessions: FakeRealtimeSession[] = [];
  const waiting: ((s: FakeRealtimeSession) => void)[] = [];
  let taken = 0;
  wss.on("connection", (ws, req) => {
    const session = new FakeRealtimeSession(ws, { url: req.url ?? "/", headers: req.headers }, options);
    sessions.push(session);
    const waiter = waiting.shift();
    if (waiter) {
      taken++;
      waiter(session);
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/v1/realtime`,
    sessions,
    nextSession: () => (taken < sessions.length ? Promise.resolve(sessions[taken++]) : new Promise((r) => waiting.push(r))),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
