// RFC 3261 Timer E for the non-INVITE requests we send over UDP (REGISTER, BYE, OPTIONS): sip.js
// leaves it unimplemented, so a lost datagram would wait 32 s for Timer F. Resend at T1, doubling to
// T2, until any response for that branch arrives.
const t1 = 500;
const t2 = 4000;
const timerF = 32_000;

export class Retransmitter {
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();

  start(branch: string, resend: () => void) {
    this.stop(branch);
    const started = Date.now();
    const schedule = (interval: number) => {
      this.pending.set(
        branch,
        setTimeout(() => {
          if (Date.now() - started >= timerF) return void this.pending.delete(branch);
          resend();
          schedule(Math.min(interval * 2, t2));
        }, interval),
      );
    };
    schedule(t1);
  }

  stop(branch: string) {
    clearTimeout(this.pending.get(branch));
    this.pending.delete(branch);
  }

  stopAll() {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
