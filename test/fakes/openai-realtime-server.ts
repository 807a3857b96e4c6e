// A local stand-in for an OpenAI Realtime provider: a real websocket server on 127.0.0.1 speaking
// the wire protocol (beta event names, or GA names for audio and transcripts), with server VAD
// simulated from audio energy and a script instead of a model. Used by the voice, bridge and bench
// tests; it keeps no audio, so many concurrent sessions stay cheap.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { muLawDecode } from "../../src/audio/g711";
import { base64ToPcm } from "../../src/audio/pcm";
import { EnergyVad, type VadEvent } from "./energy-vad";
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
  /** Wait between response.created and the response's first output (a model's time to first audio). */
  responseDelayMs?: number;
  naming?: EventNaming;
  /** RMS (16-bit scale) above which input counts as speech. */
  speechThreshold?: number;
  /** Keep the input audio's bytes as they came (inputAudio), to compare them with what was sent. */
  keepInputAudio?: boolean;
  /** Told of every server event as it is written to the socket (benches time the bridge from it). */
  onSend?: (event: Record<string, unknown>) => void;
};

type ClientEvent = { type: string; [key: string]: any };

export class FakeRealtimeSession {
  /** Every client event, with audio payloads replaced by their byte count. */
  readonly received: ClientEvent[] = [];
  readonly toolOutputs: ToolOutput[] = [];
  /** The decoded base64 of every input_audio_buffer.append, when keepInputAudio is set. */
  readonly inputAudio: Buffer[] = [];
  audioBytesReceived = 0;
  session: Record<string, any> = {
    id: newId("sess"),
    object: "realtime.session",
    model: "fake",
    modalities: ["text", "audio"],
    voice: "alloy",
    input_audio_format: "pcm16",
    output_audio_format: "pcm16",
    turn_detection: {
      type: "server_vad",
      threshold: 0.5,
      prefix_padding_ms: 300,
      silence_duration_ms: 500,
      create_response: true,
    },
  };
  private turn = 0;
  private buffered = 0; // samples in the input buffer since the last commit
  private vad: EnergyVad | null = null;
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
    ws.on("message", (data) => this.onMessage(JSON.parse(data.toString())));
    this.send({ type: "session.created", session: this.session });
  }

  send(event: Record<string, unknown>) {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify({ event_id: newId("event"), ...event }));
    this.options.onSend?.(event);
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
    this.received.push(
      event.type === "input_audio_buffer.append" ? { type: event.type, bytes: event.audio.length * 0.75 } : event,
    );
    if (this.waiters.length) this.wake();
  }

  private onMessage(event: ClientEvent) {
    this.record(event);
    switch (event.type) {
      case "session.update":
        this.session = { ...this.session, ...event.session };
        return this.send({ type: "session.updated", session: this.session });
      case "input_audio_buffer.append": {
        const bytes = Buffer.from(event.audio, "base64");
        if (this.options.keepInputAudio) this.inputAudio.push(bytes);
        return this.onAudio(
          this.session.input_audio_format === "g711_ulaw" ? muLawDecode(bytes) : base64ToPcm(event.audio),
        );
      }
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
      case "conversation.item.truncate":
        return this.send({
          type: "conversation.item.truncated",
          item_id: event.item_id,
          content_index: event.content_index,
          audio_end_ms: event.audio_end_ms,
        });
      default:
        return this.error("invalid_event", `unknown event type ${event.type}`);
    }
  }

  private onAudio(samples: Int16Array) {
    this.audioBytesReceived += samples.length * 2;
    this.buffered += samples.length;
    const settings = this.session.turn_detection;
    if (!settings) return;
    // the input rate follows the format: G.711 is 8 kHz, pcm16 24 kHz
    this.vad ??= new EnergyVad(
      this.session.input_audio_format === "g711_ulaw" ? 8000 : 24_000,
      this.options.speechThreshold ?? 500,
    );
    const vad = this.vad;
    // a server VAD works on its own windows, whatever the size of an append: 20 ms here
    const window = vad.sampleRate / 50;
    for (let at = 0; at < samples.length; at += window)
      this.onVadChange(vad.feed(samples.subarray(at, at + window), settings), settings);
  }

  private onVadChange(change: VadEvent | null, settings: Record<string, any>) {
    if (change?.type === "speech_started") {
      this.send({
        type: "input_audio_buffer.speech_started",
        audio_start_ms: change.audioStartMs,
        item_id: this.itemId,
      });
      if (this.active && settings.interrupt_response !== false) this.active.cancelled = true;
    } else if (change?.type === "speech_stopped") {
      this.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: change.audioEndMs, item_id: this.itemId });
      this.commit(settings.create_response !== false);
    }
  }

  private commit(respond: boolean) {
    const item = {
      id: this.itemId,
      object: "realtime.item",
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_audio", transcript: null }],
    };
    this.buffered = 0;
    this.itemId = newId("item");
    this.send({ type: "input_audio_buffer.committed", previous_item_id: null, item_id: item.id });
    this.send({ type: "conversation.item.created", previous_item_id: null, item });
    const turn = this.options.turns?.[this.turn];
    const transcript = turn?.userSays ?? "";
    this.send({
      type: "conversation.item.input_audio_transcription.completed",
      item_id: item.id,
      content_index: 0,
      transcript,
    });
    if (respond) this.respond(this.takeTurnReply(transcript));
  }

  private onItem(item: Record<string, any>) {
    const id = item.id ?? newId("item");
    // an output for a call this fake never made is context (a handoff's conversation so far), not an answer
    if (item.type === "function_call_output" && this.calls.has(item.call_id)) {
      const output = { callId: item.call_id, name: this.calls.get(item.call_id) ?? "unknown", output: item.output };
      this.toolOutputs.push(output);
      this.pendingOutputs.push(output);
    } else if (item.type === "message" && item.role === "user") {
      this.pendingUserText = (item.content ?? []).map((c: any) => c.text ?? "").join(" ");
    }
    this.send({
      type: "conversation.item.created",
      previous_item_id: null,
      item: { ...item, id, object: "realtime.item", status: "completed" },
    });
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
    const pacing = {
      realtime: this.options.realtime ?? false,
      chunkMs: this.options.chunkMs ?? 100,
      format: this.session.output_audio_format,
      delayMs: this.options.responseDelayMs ?? 0,
    };
    void streamResponse((e) => this.send(e), stream, reply, this.options.naming ?? "beta", pacing).finally(() => {
      if (this.active === stream) this.active = null;
    });
  }

  private error(code: string, message: string) {
    this.send({ type: "error", error: { type: "invalid_request_error", code, message, param: null } });
  }
}

export type FakeRealtimeServer = {
  /** ws:// URL of the realtime endpoint (any path is accepted): OPENAI_REALTIME_URL. */
  url: string;
  /** The strategy `model` that reaches this fake on a hub (any model on a server of its own). */
  model: string;
  sessions: FakeRealtimeSession[];
  /** Resolves with the next session to connect (or the latest one not yet taken). */
  nextSession(): Promise<FakeRealtimeSession>;
  close(): Promise<void>;
};

/**
 * Many scripted fakes behind one URL, told apart by the `model` query parameter: the bridge has one
 * OPENAI_REALTIME_URL, and a test's assistants each get their own script through their strategy's model.
 */
export type FakeRealtimeHub = {
  url: string;
  /** `model` "*" takes every model no other fake has. */
  add(options?: FakeRealtimeOptions, model?: string): FakeRealtimeServer;
  close(): Promise<void>;
};

let models = 0;

export async function startFakeRealtimeHub(): Promise<FakeRealtimeHub> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server: http });
  const endpoints = new Map<
    string,
    (ws: WebSocket, request: { url: string; headers: IncomingMessage["headers"] }) => void
  >();
  let url = "";
  wss.on("connection", (ws, req) => {
    const request = { url: req.url ?? "/", headers: req.headers };
    const model = new URL(request.url, "ws://x").searchParams.get("model") ?? "";
    const endpoint = endpoints.get(model) ?? endpoints.get("*");
    if (endpoint) endpoint(ws, request);
    else ws.close(1008, `unknown model ${model}`);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/v1/realtime`;
  return {
    url,
    add(options = {}, model = `fake-realtime-${++models}`) {
      const sessions: FakeRealtimeSession[] = [];
      const waiting: ((s: FakeRealtimeSession) => void)[] = [];
      let taken = 0;
      endpoints.set(model, (ws, request) => {
        const session = new FakeRealtimeSession(ws, request, options);
        sessions.push(session);
        const waiter = waiting.shift();
        if (waiter) {
          taken++;
          waiter(session);
        }
      });
      return {
        url,
        model,
        sessions,
        nextSession: () =>
          taken < sessions.length ? Promise.resolve(sessions[taken++]!) : new Promise((r) => waiting.push(r)),
        close: async () => {
          endpoints.delete(model);
          for (const session of sessions) session.ws.terminate();
        },
      };
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** One scripted fake on a server of its own, answering whatever model is asked for. */
export async function startFakeRealtimeServer(options: FakeRealtimeOptions = {}): Promise<FakeRealtimeServer> {
  const hub = await startFakeRealtimeHub();
  return { ...hub.add(options, "*"), close: hub.close };
}
