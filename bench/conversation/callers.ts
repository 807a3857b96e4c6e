// Callers in our wire format that hold a conversation: each streams 20 ms frames in real time from one
// shared 1 ms loop (a timer per caller would add its own lateness to what is measured; a 5 ms loop put
// the frame that ends the caller's quiet up to 5 ms later than the last voiced one, by chance, and
// that showed as ours), waits for the greeting to play out, then asks `turns` questions, each once the
// agent has said its reply's last words and been quiet for a while.
// Per turn it notes, on the caller's socket (wallClock, comparable with the fake providers' times):
// when the last non-silent frame of the question was sent, when the caller's final transcript came,
// and when the reply's first frame and first non-silent frame arrived.
import { hasSpeech } from "../../src/audio/pcm";
import { wallClock } from "../../test/fakes/wall-clock";

export type TurnTimes = {
  /** "s<stream>t<turn>" from the caller's final transcript (the providers' tag), when there was one */
  tag: string | null;
  speechEndAt: number;
  userFinalAt: number | null;
  firstFrameAt: number;
  firstVoiceAt: number;
};

/** The turn under way: when it was asked, and what has been seen of it so far. */
type PendingTurn = Omit<TurnTimes, "firstFrameAt" | "firstVoiceAt"> & { firstFrameAt: number | null; asked: number };

type Caller = {
  ws: WebSocket;
  started: number;
  sent: number;
  queue: Int16Array[];
  turnsLeft: number;
  /** when the caller may next speak (after the agent's quiet and a random pause) */
  speakAfter: number;
  lastFrameAt: number;
  lastVoiceSentAt: number;
  turn: PendingTurn;
  waiting: boolean;
  /** the agent's reply (the greeting first) has been said to its last words */
  replyDone: boolean;
  done: () => void;
};

export type ConversationOptions = {
  url: string;
  sampleRate: number;
  question: Int16Array;
  turns: number;
  /** how the greeting and every reply end (their last final transcript), before the caller speaks again */
  lastWords: string;
  /** quiet after the agent's last frame before the caller speaks */
  quietMs: number;
  /** a reply not heard within this is counted lost and the caller asks again */
  replyTimeoutMs: number;
};

export function startConversations(options: ConversationOptions) {
  const frameSamples = options.sampleRate / 50;
  const silence = new Int16Array(frameSamples);
  const callers = new Set<Caller>();
  const turns: TurnTimes[] = [];
  let lost = 0;
  let failed = 0;

  const ask = (c: Caller, now: number) => {
    for (let i = 0; i < options.question.length; i += frameSamples) {
      const frame = new Int16Array(frameSamples);
      frame.set(options.question.subarray(i, i + frameSamples));
      c.queue.push(frame);
    }
    c.turnsLeft--;
    c.waiting = true;
    c.replyDone = false;
    c.turn = { tag: null, speechEndAt: 0, userFinalAt: null, firstFrameAt: null, asked: now };
  };

  const loop = setInterval(() => {
    const now = performance.now();
    for (const c of callers) {
      if (c.ws.readyState !== WebSocket.OPEN) continue;
      if (!c.waiting && c.queue.length === 0) {
        const quiet = c.replyDone && c.lastFrameAt > 0 && now - c.lastFrameAt >= options.quietMs && now >= c.speakAfter;
        if (quiet && c.turnsLeft === 0) {
          callers.delete(c);
          c.ws.close(1000);
          c.done();
          continue;
        }
        if (quiet) ask(c, now);
      }
      if (c.waiting && now - c.turn.asked > options.replyTimeoutMs) {
        lost++;
        c.waiting = false;
        c.replyDone = true;
        c.speakAfter = now;
      }
      while (c.sent * 20 <= now - c.started) {
        const frame = c.queue.shift();
        c.ws.send(frame ?? silence);
        c.sent++;
        if (frame && hasSpeech(frame)) c.lastVoiceSentAt = wallClock();
        // the question's last frame went out: its last voiced frame is where the caller stopped
        if (frame && c.queue.length === 0) c.turn.speechEndAt = c.lastVoiceSentAt;
      }
    }
  }, 1);

  /** Dials one caller; resolves when its conversation is over (or the call closed). */
  function dial(): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(options.url);
      ws.binaryType = "arraybuffer";
      const c: Caller = {
        ws,
        started: 0,
        sent: 0,
        queue: [],
        turnsLeft: options.turns,
        speakAfter: 0,
        lastFrameAt: 0,
        lastVoiceSentAt: 0,
        turn: { tag: null, speechEndAt: 0, userFinalAt: null, firstFrameAt: null, asked: 0 },
        waiting: false,
        replyDone: false,
        done: resolve,
      };
      ws.onmessage = (event) => {
        if (typeof event.data === "string") {
          const message = JSON.parse(event.data);
          if (message.type === "ready") {
            c.started = performance.now();
            callers.add(c);
          }
          if (message.type === "transcript" && message.role === "ASSISTANT" && message.final)
            c.replyDone ||= String(message.text).endsWith(options.lastWords);
          if (message.type === "transcript" && message.role === "USER" && message.final && c.waiting) {
            c.turn.userFinalAt ??= wallClock();
            c.turn.tag = /s\d+t\d+/.exec(message.text)?.[0] ?? c.turn.tag;
          }
          return;
        }
        const now = performance.now();
        c.lastFrameAt = now;
        // the reply starts after the caller's final transcript (the turn's end; the socket keeps the order)
        if (!c.waiting || c.turn.userFinalAt === null) return;
        const at = wallClock();
        c.turn.firstFrameAt ??= at;
        if (!hasSpeech(new Int16Array(event.data as ArrayBuffer))) return;
        const { tag, speechEndAt, userFinalAt, firstFrameAt } = c.turn;
        turns.push({ tag, speechEndAt, userFinalAt, firstFrameAt, firstVoiceAt: at });
        c.waiting = false;
        // callers drift apart instead of asking in step
        c.speakAfter = now + options.quietMs + Math.random() * 1000;
      };
      ws.onclose = () => {
        if (callers.delete(c)) failed++;
        if (!c.started) failed++;
        resolve();
      };
    });
  }

  return {
    turns,
    dial,
    get live() {
      return callers.size;
    },
    get lost() {
      return lost;
    },
    get failed() {
      return failed;
    },
    stop() {
      clearInterval(loop);
      for (const c of callers) c.ws.close(1000);
      callers.clear();
    },
  };
}
