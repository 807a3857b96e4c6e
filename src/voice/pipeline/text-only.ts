// The pipeline's text modality: no STT (the caller's turns come by sendText) and no TTS (each utterance
// is done as soon as its text is, so its transcript goes out at once); the LLM stage is unchanged.
import { EventEmitter } from "node:events";
import type { SttEvents } from "./stt-socket";
import type { TtsEvents } from "./elevenlabs-tts";
import type { SpeechStream, SttStream, TtsSource } from "./pipeline-session";

class SilentSpeech extends EventEmitter<TtsEvents> implements SpeechStream {
  text() {}
  end() {
    // a macrotask: the greeting's end must reach the call, which listens only once the session is returned
    setTimeout(() => this.emit("done"), 0);
  }
  cancel() {}
}

export const silentTts: TtsSource = { take: async () => new SilentSpeech(), close() {} };

class NoStt extends EventEmitter<SttEvents> implements SttStream {
  send() {}
  async finalize() {
    return "";
  }
  close() {}
}

export const noStt = () => new NoStt();
