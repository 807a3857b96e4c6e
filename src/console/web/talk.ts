// A call from the browser in the bridge's own wire format (docs/bridge.md): the microphone (echo
// cancellation on) through the capture worklet as 20 ms PCM16 frames, the agent's frames through the
// playback worklet and an analyser (the level meter), transcripts and tool calls as they arrive.
import { session } from "./api";

export type TalkEvents = {
  onTranscript(role: "USER" | "ASSISTANT", text: string, final: boolean): void;
  onTool(text: string): void;
  onStatus(text: string): void;
  onLevel(level: number): void;
  onEnded(reason: string): void;
};

const sampleRate = 16000;

export async function startTalk(
  bridgeUrl: string,
  target: { kind: "assistants" | "agents"; id: string },
  events: TalkEvents,
) {
  const mic = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, channelCount: 1 },
  });
  // the context runs at the call's rate: the browser resamples the microphone and the output for us
  const context = new AudioContext({ sampleRate, latencyHint: "interactive" });
  await context.audioWorklet.addModule("/console/talk-worklet.js");
  const capture = new AudioWorkletNode(context, "capture");
  const playback = new AudioWorkletNode(context, "playback", { outputChannelCount: [1] });
  const analyser = new AnalyserNode(context, { fftSize: 512 });
  context.createMediaStreamSource(mic).connect(capture);
  playback.connect(analyser).connect(context.destination);
  await context.resume();

  const param = target.kind === "agents" ? "agentId" : "assistantId";
  // browsers cannot set headers on a websocket: the token goes in the query (never logged by the bridge)
  const query = new URLSearchParams({ [param]: target.id, sampleRate: String(sampleRate), token: session()!.token });
  const ws = new WebSocket(`${bridgeUrl}/v1/calls?${query}`);
  ws.binaryType = "arraybuffer";
  let ready = false;
  let closed = false;

  capture.port.onmessage = (event) => ready && ws.readyState === WebSocket.OPEN && ws.send(event.data as ArrayBuffer);
  ws.onopen = () => events.onStatus("connected, waiting for the agent");
  ws.onmessage = (event) => {
    if (event.data instanceof ArrayBuffer) return playback.port.postMessage(event.data, [event.data]);
    const message = JSON.parse(event.data as string);
    if (message.type === "ready") {
      ready = true;
      events.onStatus(`in call ${message.callId}`);
    } else if (message.type === "transcript") events.onTranscript(message.role, message.text, message.final);
    else if (message.type === "interrupt") playback.port.postMessage("flush");
    else if (message.type === "tool_call") events.onTool(`→ ${message.name}(${JSON.stringify(message.arguments)})`);
    else if (message.type === "tool_result") events.onTool(`← ${message.name}: ${message.output}`);
    else if (message.type === "error") events.onStatus(`error: ${message.message}`);
    else if (message.type === "ended") events.onEnded(message.reason);
  };
  ws.onclose = (event) => {
    if (!ready && event.code !== 1000)
      events.onStatus(`the bridge refused the call (${event.code}); check the token and the assistant's strategy`);
    stop();
  };

  const samples = new Float32Array(analyser.fftSize);
  const meter = setInterval(() => {
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const s of samples) sum += s * s;
    events.onLevel(Math.sqrt(sum / samples.length));
  }, 50);

  function stop() {
    if (closed) return;
    closed = true;
    clearInterval(meter);
    for (const track of mic.getTracks()) track.stop();
    void context.close();
  }

  return {
    hangUp() {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "hangup" }));
      else ws.close();
    },
  };
}
