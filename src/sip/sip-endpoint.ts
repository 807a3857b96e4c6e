// The bridge's one SIP address (UDP and TCP on SIP_PORT), shared by the user agents of every
// credential it owns: it frames and sanity-checks what arrives, stamps the top Via with where a
// request came from (RFC 3261 §18.2.1, RFC 3581), hands each message to its user agent, and sends.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, connect, type Server, type Socket } from "node:net";
import { log } from "../log";
import {
  isRequest,
  joinMessage,
  methodOf,
  replaceTopVia,
  splitMessage,
  StreamFramer,
  type SipMessage,
} from "./sip-message";
import { statelessResponse } from "./stateless-response";

export type Protocol = "UDP" | "TCP";
export type Peer = { protocol: Protocol; address: string; port: number };

/** A user agent's transport, as the endpoint sees it. */
export interface EndpointClient {
  readonly token: string;
  receive(message: SipMessage, from: Peer): void;
}

/** The user agent for a request, or the status the endpoint answers it with. */
export type RequestRouter = (
  request: SipMessage,
  from: Peer,
) => { client: EndpointClient } | { status: number; reason: string };

export const viaTokenParam = "x-vas";

export class SipEndpoint {
  private readonly clients = new Map<string, EndpointClient>();
  private readonly connections = new Map<string, Socket>();
  private udp!: UdpSocket;
  private tcp!: Server;
  router: RequestRouter = () => ({ status: 404, reason: "Not Found" });
  dropped = 0;
  /** SIP messages taken in, per transport. */
  readonly received: Record<Protocol, number> = { UDP: 0, TCP: 0 };

  private constructor(
    readonly publicHost: string,
    readonly port: number,
  ) {}

  static async listen(options: { bindHost: string; publicHost: string; port: number }): Promise<SipEndpoint> {
    const endpoint = new SipEndpoint(options.publicHost, options.port);
    await endpoint.open(options.bindHost);
    return endpoint;
  }

  get sentBy() {
    return `${this.publicHost}:${this.port}`;
  }

  add(client: EndpointClient) {
    this.clients.set(client.token, client);
  }

  remove(token: string) {
    this.clients.delete(token);
  }

  async send(peer: Peer, text: string): Promise<void> {
    if (peer.protocol === "UDP") {
      await new Promise<void>((resolve, reject) =>
        this.udp.send(text, peer.port, peer.address, (e) => (e ? reject(e) : resolve())),
      );
      return;
    }
    const socket = this.connections.get(`${peer.address}:${peer.port}`) ?? (await this.dial(peer));
    socket.write(text);
  }

  async close() {
    for (const socket of this.connections.values()) socket.destroy();
    await Promise.all([
      new Promise((r) => this.udp.close(() => r(null))),
      new Promise((r) => this.tcp.close(() => r(null))),
    ]);
  }

  private async open(bindHost: string) {
    this.udp = createSocket("udp4");
    this.udp.on("message", (data, rinfo) =>
      this.receive(data.toString("utf8"), { protocol: "UDP", address: rinfo.address, port: rinfo.port }),
    );
    // ICMP port-unreachable from a peer that went away surfaces here; it is not our failure
    this.udp.on("error", (error) => log.debug("sip udp socket error", { error: error.message }));
    await new Promise<void>((resolve, reject) => {
      this.udp.once("error", reject);
      this.udp.bind(this.port, bindHost, () => {
        this.udp.off("error", reject);
        resolve();
      });
    });
    this.tcp = createServer((socket) =>
      this.adopt(socket, {
        protocol: "TCP",
        address: socket.remoteAddress!.replace(/^::ffff:/, ""),
        port: socket.remotePort!,
      }),
    );
    await new Promise<void>((resolve, reject) => {
      this.tcp.once("error", reject);
      this.tcp.listen(this.port, bindHost, () => {
        this.tcp.off("error", reject);
        resolve();
      });
    });
  }

  private dial(peer: Peer): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect(peer.port, peer.address, () => {
        socket.off("error", reject);
        resolve(socket);
      });
      socket.once("error", reject);
      this.adopt(socket, peer);
    });
  }

  private adopt(socket: Socket, peer: Peer) {
    const key = `${peer.address}:${peer.port}`;
    this.connections.set(key, socket);
    const framer = new StreamFramer();
    socket.on("data", (chunk) => {
      try {
        for (const text of framer.push(chunk)) this.receive(text, peer);
      } catch (error) {
        log.warn("sip tcp stream dropped", { peer: key, error: (error as Error).message });
        socket.destroy();
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => this.connections.get(key) === socket && this.connections.delete(key));
  }

  private receive(text: string, from: Peer) {
    const message = splitMessage(text);
    if (!message) {
      // CRLF keep-alives and garbage alike: nothing to answer
      if (text.trim()) this.dropped++;
      return;
    }
    this.received[from.protocol]++;
    try {
      if (isRequest(message)) return this.receiveRequest(message, from);
      const token = /;\s*x-vas=([\w-]+)/i.exec(message.headers.find((h) => /^(via|v)\s*:/i.test(h)) ?? "")?.[1];
      const client = token && this.clients.get(token);
      if (client) client.receive(message, from);
      else this.dropped++;
    } catch (error) {
      this.dropped++;
      log.warn("sip message dropped", { from: `${from.address}:${from.port}`, error: (error as Error).message });
    }
  }

  private receiveRequest(message: SipMessage, from: Peer) {
    replaceTopVia(message, (via) => {
      const stamped = via.replace(/;\s*(received|rport)(=[^;]*)?/gi, "");
      return `${stamped};received=${from.address};rport=${from.port}`;
    });
    const routed = this.router(message, from);
    if ("client" in routed) return routed.client.receive(message, from);
    const method = methodOf(message);
    if (method === "INVITE")
      log.info("sip request refused", { from: `${from.address}:${from.port}`, method, status: routed.status });
    if (method === "ACK") return;
    const response = statelessResponse(message, routed.status, routed.reason);
    if (response) void this.send(from, joinMessage(response)).catch(() => {});
  }
}
