// The DNS wire: UDP and TCP on one port. A message that does not decode is
// answered FORMERR (never a crash); EDNS0 is echoed and sets the UDP size
// (512 without it); an answer too large for UDP is cut with the TC bit set so
// the client asks again over TCP, which carries it whole.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIP, type Server as TcpServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet } from 'dns-packet';
import { FORWARD, RCODE, type Resolver } from './answer';
import type { Forwarder } from './forward';
import type { DnsMetrics } from './metrics';
import type { Logger } from '../shared/log';

const UDP_DEFAULT_SIZE = 512;
const TCP_MAX_SIZE = 65535;
const TCP_IDLE_MS = 10_000;
const RCODE_BADVERS = 16;
const HEADER_BYTES = 12;

export interface DnsServerOptions {
  resolver: Resolver;
  /** Absent: names outside the cluster's zones are answered SERVFAIL, as CoreDNS with no next plugin. */
  forwarder?: Forwarder;
  metrics: DnsMetrics;
  bindAddress: string;
  /** 0: a free port (the same one for UDP and TCP). */
  port: number;
  log: Logger;
}

/** The header of a reply to a message that could not be decoded: its id, QR, opcode, RD, and the rcode. */
function headerOnlyReply(msg: Buffer, rcode: number): Buffer | undefined {
  if (msg.length < 2) return undefined;
  const out = Buffer.alloc(HEADER_BYTES);
  msg.copy(out, 0, 0, Math.min(msg.length, 4));
  const flags = msg.length >= 4 ? msg.readUInt16BE(2) : 0;
  out.writeUInt16BE(0x8000 | (flags & 0x7900) | rcode, 2);
  out.fill(0, 4);
  return out;
}

interface Replied {
  out: Buffer | undefined;
  rcode: number;
  plugin: string;
}

export class DnsServer {
  private udp?: UdpSocket;
  private tcp?: TcpServer;
  private readonly conns = new Set<Socket>();
  private boundPort = 0;

  constructor(private readonly o: DnsServerOptions) {}

  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const family = isIP(this.o.bindAddress) === 6 ? 'udp6' : 'udp4';
    // With port 0, UDP picks the port and TCP takes the same one; retry if another process has it on TCP.
    for (let attempt = 0; ; attempt++) {
      const udp = createSocket({ type: family });
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(this.o.port, this.o.bindAddress, () => resolve());
      });
      const port = udp.address().port;
      const tcp = createServer((s) => this.serveTcp(s));
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen(port, this.o.bindAddress, () => resolve());
        });
      } catch (err) {
        udp.close();
        if (this.o.port !== 0 || attempt >= 5) throw err;
        continue;
      }
      udp.on('error', (err) => this.o.log.error('dns udp socket error', { err: String(err) }));
      udp.on('message', (msg, rinfo) => {
        this.handle(msg, 'udp', rinfo.family === 'IPv6' ? 6 : 4)
          .then((out) => out && udp.send(out, rinfo.port, rinfo.address))
          .catch((err) => this.o.log.error('dns request failed', { err: String(err) }));
      });
      this.udp = udp;
      this.tcp = tcp;
      this.boundPort = port;
      return;
    }
  }

  async stop(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await Promise.all([
      new Promise<void>((r) => (this.udp ? this.udp.close(() => r()) : r())),
      new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r())),
    ]);
  }

  private serveTcp(sock: Socket): void {
    this.conns.add(sock);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    sock.on('close', () => this.conns.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf = Buffer.alloc(0);
    // Answers go out in the order the queries came, one message after the other.
    let chain = Promise.resolve();
    sock.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        const family = sock.remoteFamily === 'IPv6' ? 6 : 4;
        chain = chain
          .then(() => this.handle(msg, 'tcp', family))
          .then((out) => {
            if (!out || sock.destroyed) return;
            const len = Buffer.alloc(2);
            len.writeUInt16BE(out.length);
            sock.write(Buffer.concat([len, out]));
          })
          .catch((err) => this.o.log.error('dns request failed', { err: String(err) }));
      }
    });
  }

  /** The reply to one message, undefined when there is none to send (a response, or too short to have an id). */
  async handle(msg: Buffer, proto: 'udp' | 'tcp', family: 4 | 6): Promise<Buffer | undefined> {
    const start = performance.now();
    let query: DecodedPacket | undefined;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      query = undefined;
    }
    if (query?.type === 'response') return undefined;
    let r: Replied;
    if (!query || query.type !== 'query' || (query.questions?.length ?? 0) !== 1) {
      r = { out: headerOnlyReply(msg, RCODE.FORMERR), rcode: RCODE.FORMERR, plugin: '' };
    } else {
      try {
        r = await this.reply(query, msg, proto);
      } catch (err) {
        // A bug must cost one answer, never the server (CoreDNS's errors plugin and panics counter).
        this.o.metrics.panics.inc();
        this.o.log.error('dns answer failed', { err: String(err), name: query.questions![0].name });
        r = { out: headerOnlyReply(msg, RCODE.SERVFAIL), rcode: RCODE.SERVFAIL, plugin: '' };
      }
    }
    this.o.metrics.observe({
      proto,
      family,
      qtype: query?.questions?.[0]?.type ?? 'other',
      rcode: r.rcode,
      plugin: r.plugin,
      seconds: (performance.now() - start) / 1000,
      requestSize: msg.length,
      responseSize: r.out?.length ?? 0,
    });
    return r.out;
  }

  private async reply(query: DecodedPacket, msg: Buffer, proto: 'udp' | 'tcp'): Promise<Replied> {
    const q = query.questions![0];
    const opt = query.additionals?.find((a) => a.type === 'OPT') as any;
    const empty = (rcode: number) => ({ rcode, answers: [], authorities: [], additionals: [] });
    if (((query.flags ?? 0) & 0x7800) !== 0) {
      return { out: this.encode(query, empty(RCODE.NOTIMP), opt, proto), rcode: RCODE.NOTIMP, plugin: '' };
    }
    if (opt && opt.ednsVersion > 0) {
      return { out: this.encode(query, empty(RCODE_BADVERS), opt, proto), rcode: RCODE_BADVERS, plugin: '' };
    }
    const answered = this.o.resolver.resolve(q);
    if (answered !== FORWARD) {
      return {
        out: this.encode(query, answered, opt, proto, true),
        rcode: answered.rcode,
        plugin: 'kubernetes',
      };
    }
    if (this.o.forwarder?.upstreams.length) {
      const key = `${q.name.toLowerCase()}|${q.type}|${opt?.flag_do ? 1 : 0}`;
      const out = await this.o.forwarder.forward(msg, key, proto === 'tcp');
      if (out && out.length >= 4) return { out, rcode: out.readUInt16BE(2) & 0xf, plugin: 'forward' };
    }
    return { out: this.encode(query, empty(RCODE.SERVFAIL), opt, proto), rcode: RCODE.SERVFAIL, plugin: '' };
  }

  private encode(
    query: DecodedPacket,
    a: { rcode: number; answers: Answer[]; authorities: Answer[]; additionals: Answer[] },
    opt: any,
    proto: 'udp' | 'tcp',
    authoritative = false,
  ): Buffer {
    // As miekg/dns SetReply: id, opcode, RD and CD copied; no RA (this server does not recurse itself).
    const copied = (query.flags ?? 0) & (dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED);
    const flags = copied | (authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (a.rcode & 0xf);
    const additionals = [...a.additionals];
    if (opt) {
      additionals.push({
        type: 'OPT',
        name: '.',
        udpPayloadSize: Math.max(UDP_DEFAULT_SIZE, opt.udpPayloadSize ?? 0),
        extendedRcode: a.rcode >> 4,
        ednsVersion: 0,
        flags: opt.flag_do ? dnsPacket.DNSSEC_OK : 0,
      } as any);
    }
    const reply: Packet = {
      type: 'response',
      id: query.id,
      flags,
      questions: query.questions,
      answers: a.answers,
      authorities: a.authorities,
      additionals,
    };
    const limit =
      proto === 'tcp'
        ? TCP_MAX_SIZE
        : opt
          ? Math.max(UDP_DEFAULT_SIZE, opt.udpPayloadSize ?? 0)
          : UDP_DEFAULT_SIZE;
    const bytes = dnsPacket.encode(reply);
    return bytes.length <= limit ? bytes : dnsPacket.encode(truncate(reply, limit));
  }
}

/** As CoreDNS's Scrub: the extra section goes first, then answers from the end, and TC is set. */
function truncate(reply: Packet, limit: number): Packet {
  const opt = reply.additionals!.filter((r) => r.type === 'OPT');
  const answers = reply.answers ?? [];
  const base: Packet = {
    ...reply,
    flags: (reply.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
    additionals: opt,
  };
  // The largest prefix of the answers that fits.
  let lo = 0;
  let hi = answers.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (dnsPacket.encodingLength({ ...base, answers: answers.slice(0, mid) }) <= limit) lo = mid;
    else hi = mid - 1;
  }
  const cut = { ...base, answers: answers.slice(0, lo) };
  return dnsPacket.encodingLength(cut) <= limit ? cut : { ...cut, authorities: [] };
}
