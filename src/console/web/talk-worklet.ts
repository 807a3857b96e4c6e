// Audio worklets of the Talk page, run on the audio thread at the AudioContext's rate (the call's rate):
// "capture" turns microphone input into 20 ms PCM16 frames for the websocket; "playback" plays the
// agent's frames back to back from a queue, waiting for a little audio before it starts so that
// network jitter does not become gaps, and drops the queue on barge-in.
declare const sampleRate: number;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}
declare function registerProcessor(name: string, processor: new () => AudioWorkletProcessor): void;

class CaptureProcessor extends AudioWorkletProcessor {
  private frame = new Int16Array(sampleRate / 50);
  private filled = 0;

  process(inputs: Float32Array[][]) {
    const input = inputs[0]?.[0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]!));
      this.frame[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
      if (this.filled === this.frame.length) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(sampleRate / 50);
        this.filled = 0;
      }
    }
    return true;
  }
}

class PlaybackProcessor extends AudioWorkletProcessor {
  private readonly queue: Float32Array[] = [];
  private offset = 0;
  private queued = 0;
  private playing = false;
  // 60 ms in hand before a reply starts playing: frames arrive paced in real time, a little late at times
  private readonly startAt = Math.round(sampleRate * 0.06);

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent) => {
      if (event.data === "flush") {
        this.queue.length = 0;
        this.offset = this.queued = 0;
        this.playing = false;
        return;
      }
      const pcm = new Int16Array(event.data as ArrayBuffer);
      const samples = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 0x8000;
      this.queue.push(samples);
      this.queued += samples.length;
    };
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]) {
    const out = outputs[0]![0]!;
    if (!this.playing && this.queued >= this.startAt) this.playing = true;
    let i = 0;
    while (this.playing && i < out.length) {
      const head = this.queue[0];
      if (!head) {
        this.playing = false; // ran dry: the reply is over (or late); buffer again before resuming
        break;
      }
      const n = Math.min(out.length - i, head.length - this.offset);
      out.set(head.subarray(this.offset, this.offset + n), i);
      i += n;
      this.offset += n;
      this.queued -= n;
      if (this.offset === head.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    out.fill(0, i);
    return true;
  }
}

registerProcessor("capture", CaptureProcessor);
registerProcessor("playback", PlaybackProcessor);
