// One stage of an answer (engine.ts, replyStage), timed from its first start to its first end and
// reported once: a reply's later rounds (after tools) or later sentences do not move it. A reply
// prepared before its turn was decided (preemptive generation) holds its report until it is heard:
// the stage belongs to the turn it answers, which the engine reports first.
import type { ReplyStageEvent } from "./engine";

export class StageTimer {
  private startedAt: number | null = null;
  private endedAt: number | null = null;
  private reported = false;

  constructor(
    private readonly stage: ReplyStageEvent["stage"],
    private readonly report: (event: ReplyStageEvent) => void,
    private held = false,
  ) {}

  start(at = performance.now()) {
    this.startedAt ??= at;
  }

  end(at = performance.now()) {
    if (this.startedAt === null || this.endedAt !== null) return;
    this.endedAt = at;
    this.flush();
  }

  /** A held stage is reported from now on (at once, when it has ended already). */
  release() {
    this.held = false;
    this.flush();
  }

  private flush() {
    if (this.held || this.reported || this.startedAt === null || this.endedAt === null) return;
    this.reported = true;
    this.report({ stage: this.stage, startedAt: this.startedAt, at: this.endedAt });
  }
}
