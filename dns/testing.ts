// Test helper of the DNS server: a real apiserver in-process, the DNS server
// on 127.0.0.1 (free ports, no upstream: nothing leaves the machine), and a
// DNS client on dns-packet over UDP and TCP.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { DecodedPacket, Packet, RecordType } from 'dns-packet';
import { startTestAPIServer, type TestAPIServer } from '../apiserver/server/testing';
import { Client, type KubeObject } from '../shared/client';
import { defaultFlagValues } from '../shared/options/defaults';
import type { FlagValues } from '../shared/options/flags';
import { dnsFlags } from './app/options';
import { startDns, type RunningDns } from './app/app';

export interface QueryOptions {
  tcp?: boolean;
  /** Adds an OPT record with this UDP payload size. */
  edns?: number;
}

export type Reply = DecodedPacket & { rcode: string; flag_aa: boolean; flag_tc: boolean };

let nextId = 1;

export function sendUdp(port: number, bytes: Buffer, timeoutMs = 5000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error('no UDP answer'));
    }, timeoutMs);
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      resolve(msg);
    });
    sock.send(bytes, port, '127.0.0.1');
  });
}

export function sendTcp(port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(bytes.length);
      sock.write(Buffer.concat([len, bytes]));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
  });
}

export function queryBytes(name: string, type: RecordType, o: QueryOptions = {}): Buffer {
  const q: Packet = {
    type: 'query',
    id: nextId++ & 0xffff,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, class: 'IN', name }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, flags: 0 } as any] : [],
  };
  return dnsPacket.encode(q);
}

export class DnsTestEnv {
  private constructor(
    readonly srv: TestAPIServer,
    readonly client: Client,
    readonly dns: RunningDns,
  ) {}

  static async start(flags: FlagValues = {}): Promise<DnsTestEnv> {
    const srv = await startTestAPIServer();
    const client = Client.create(srv.config, { qps: -1, contentType: 'application/json' });
    try {
      const values = defaultFlagValues(dnsFlags, {
        dnsBindAddress: '127.0.0.1',
        dnsPort: 0,
        healthPort: 0,
        readyPort: 0,
        metricsBindAddress: '127.0.0.1:0',
        upstream: ['none'],
        ...flags,
      });
      const dns = await startDns(values, client);
      await dns.synced;
      return new DnsTestEnv(srv, client, dns);
    } catch (err) {
      await client.close();
      await srv.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await this.dns.stop();
    await this.client.close();
    await this.srv.stop();
  }

  async query(name: string, type: RecordType, o: QueryOptions = {}): Promise<Reply> {
    const bytes = queryBytes(name, type, o);
    const raw = o.tcp ? await sendTcp(this.dns.dnsPort, bytes) : await sendUdp(this.dns.dnsPort, bytes);
    return dnsPacket.decode(raw) as Reply;
  }

  /** Asks until check passes, for changes the informers deliver asynchronously (at most timeoutMs). */
  async eventually(
    name: string,
    type: RecordType,
    check: (r: Reply) => boolean,
    timeoutMs = 1000,
  ): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.query(name, type);
      if (check(r) || Date.now() > deadline) return r;
      await new Promise((res) => setTimeout(res, 10));
    }
  }

  async createNamespace(name: string): Promise<void> {
    await this.client
      .resource('namespaces')
      .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  async createService(ns: string, name: string, spec: Record<string, unknown>): Promise<KubeObject> {
    return this.client
      .resource('services')
      .namespace(ns)
      .create({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec } as KubeObject);
  }

  /** An EndpointSlice of a service, as the EndpointSlice controller writes it. */
  async createSlice(
    ns: string,
    service: string,
    name: string,
    endpoints: { addresses: string[]; hostname?: string; ready?: boolean }[],
    ports: { name?: string; protocol?: string; port: number }[] = [],
    addressType = 'IPv4',
  ): Promise<KubeObject> {
    return this.client
      .resource('endpointslices.discovery.k8s.io')
      .namespace(ns)
      .create({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name, labels: { 'kubernetes.io/service-name': service } },
        addressType,
        endpoints: endpoints.map((e) => ({
          addresses: e.addresses,
          ...(e.hostname ? { hostname: e.hostname } : {}),
          conditions: { ready: e.ready ?? true },
        })),
        ports: ports.map((p) => ({ protocol: 'TCP', ...p })),
      } as KubeObject);
  }

  /** Waits until the index has seen the object (its informer event arrived). */
  async waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('the DNS index did not see the change');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
