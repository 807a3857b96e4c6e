// RTP ports: even numbers within RTP_PORT_MIN..RTP_PORT_MAX (RTCP would take port+1). Several bridges
// (the workers of one `start:bridge` too) share a machine and a range, so a port counts as ours only
// once its socket is bound; each pool starts at a random port so they do not probe the same ports in step.
import type { udp } from "bun";

export type RtpSocket = udp.Socket<"buffer">;
export type DatagramHandler = (data: Buffer, port: number, address: string) => void;

/** Every port of the range is bound (by us or another process): the call is refused for now (SIP 503). */
export class PortsExhausted extends Error {
  constructor(min: number, max: number) {
    super(`no free RTP port in ${min}..${max}`);
  }
}

export class PortPool {
  private readonly inUse = new Set<number>();
  private cursor: number;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly hostname: string,
  ) {
    this.min = min % 2 === 0 ? min : min + 1;
    this.cursor = this.min + 2 * Math.floor(Math.random() * this.slots);
  }

  /** Binds a socket on the next free even port; throws when the range is exhausted. */
  async bind(onData: DatagramHandler): Promise<RtpSocket> {
    for (let i = 0; i < this.slots; i++) {
      const port = this.cursor;
      this.cursor = port + 2 > this.max ? this.min : port + 2;
      if (this.inUse.has(port)) continue;
      try {
        const socket = await Bun.udpSocket({
          hostname: this.hostname,
          port,
          socket: { data: (_s, data, rport, raddr) => onData(data, rport, raddr), error: () => {} },
        });
        // (errors are ICMP port-unreachable from a caller that went away: the time-out handles that)
        this.inUse.add(port);
        return socket;
      } catch {
        // taken by another process (another bridge on this machine): try the next one
      }
    }
    throw new PortsExhausted(this.min, this.max);
  }

  private get slots() {
    return Math.floor((this.max - this.min) / 2) + 1;
  }

  release(socket: RtpSocket) {
    this.inUse.delete(socket.port);
    socket.close();
  }

  get used() {
    return this.inUse.size;
  }
}
