// The cluster DNS server under load (issue 34): the dns executable as its own
// process against an in-process apiserver holding 1,000 then 10,000 ClusterIP
// Services; A queries for random Services over UDP from this process, at a
// fixed 1,000 qps (latency p50/p99) and then as fast as answers come back
// (throughput). Prints qps, latency and the server's RSS; no assertion.
//   node dist/bench/dns.js [--counts 1000,10000] [--seconds 5] [--concurrency 32]
import { createSocket } from 'node:dgram';
import { parseArgs } from 'node:util';
import * as dnsPacket from 'dns-packet';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { Client } from '../shared/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { waitUntil } from '../shared/cluster/process';
import { startDnsProcess, type DnsProc } from '../test-e2e/support/processes';
import { removeDir, rssBytes, startApiserver, tempDir } from './lib/procs';

const { values: args } = parseArgs({
  options: {
    counts: { type: 'string', default: '1000,10000' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
  },
});
const COUNTS = args.counts!.split(',').map(Number);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const NS = 'bench';

const rssMB = (pid: number) => rssBytes(pid) / 1024 ** 2;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** A UDP client that matches answers to queries by id. */
class Asker {
  private readonly sock = createSocket('udp4');
  private readonly waiting = new Map<number, (rcode: number) => void>();
  private id = 0;
  constructor(private readonly port: number) {
    this.sock.on('message', (msg) => {
      const id = msg.readUInt16BE(0);
      const done = this.waiting.get(id);
      this.waiting.delete(id);
      done?.(msg.readUInt16BE(2) & 0xf);
    });
  }
  ask(name: string): Promise<{ ms: number; rcode: number }> {
    const id = (this.id = (this.id + 1) & 0xffff);
    const bytes = dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: 'A', name }],
    });
    const start = process.hrtime.bigint();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ ms: NaN, rcode: -1 });
      }, 2000);
      this.waiting.set(id, (rcode) => {
        clearTimeout(timer);
        resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, rcode });
      });
      this.sock.send(bytes, this.port, '127.0.0.1');
    });
  }
  close(): void {
    this.sock.close();
  }
}

function summary(label: string, results: { ms: number; rcode: number }[], seconds: number): string {
  const ok = results
    .filter((r) => r.rcode === 0)
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const lost = results.length - ok.length;
  return `${label}: ${(ok.length / seconds).toFixed(0)} qps answered, p50 ${percentile(ok, 0.5)?.toFixed(3)} ms, p99 ${percentile(ok, 0.99)?.toFixed(3)} ms, ${lost} not NOERROR/lost of ${results.length}`;
}

async function fixedRate(asker: Asker, names: () => string, qps: number): Promise<string> {
  const pending: Promise<{ ms: number; rcode: number }>[] = [];
  const start = Date.now();
  const total = qps * SECONDS;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / qps;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(asker.ask(names()));
  }
  return summary(`  ${qps} qps fixed`, await Promise.all(pending), SECONDS);
}

async function closedLoop(asker: Asker, names: () => string, seconds = SECONDS): Promise<string> {
  const results: { ms: number; rcode: number }[] = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) results.push(await asker.ask(names()));
    }),
  );
  return summary(`  max (${CONCURRENCY} in flight)`, results, seconds);
}

async function main(): Promise<void> {
  // The apiserver is a process of its own too, so this one only asks (and its heap stays small).
  const dir = tempDir('dns-bench');
  const srv = await startApiserver({
    dir,
    dataDir: join(dir, 'data'),
    certDir: join(dir, 'certs'),
    // kubeadm's Service range: room for 10,000 ClusterIPs (the default /24 has 254).
    args: ['--service-cluster-ip-range', '10.96.0.0/12'],
  });
  const kubeconfig = join(dir, `kubeconfig-${srv.port}`);
  const client = Client.create(loadKubeconfig(kubeconfig), { qps: -1, contentType: 'application/json' });
  let dns: DnsProc | undefined;
  let asker: Asker | undefined;
  try {
    dns = await startDnsProcess(kubeconfig, dir);
    asker = new Asker(dns.ports.dns);
    await client
      .resource('namespaces')
      .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    console.log(`dns server pid ${dns.pid}, RSS ${rssMB(dns.pid).toFixed(1)} MB with no Services of its own`);
    const services = client.resource('services').namespace(NS);
    let made = 0;
    for (const count of COUNTS) {
      const t0 = Date.now();
      let next = made;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < count) {
            const i = next++;
            await services.create({
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name: `svc-${i}` },
              spec: { ports: [{ name: 'http', port: 80 }] },
            } as any);
          }
        }),
      );
      made = count;
      const last = `svc-${count - 1}.${NS}.svc.cluster.local`;
      await waitUntil(async () => (await asker!.ask(last)).rcode === 0, 60_000, `${last} answered`);
      console.log(`\n${count} Services (created and seen in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      const names = () => `svc-${Math.floor(Math.random() * count)}.${NS}.svc.cluster.local`;
      // Settle first: the apiserver and the server have just taken a burst of writes and events.
      await new Promise((r) => setTimeout(r, 2000));
      await closedLoop(asker, names, 2);
      console.log(await fixedRate(asker, names, 1000));
      console.log(await closedLoop(asker, names));
      console.log(
        `  dns server RSS ${rssMB(dns.pid).toFixed(1)} MB; load average ${loadavg()[0].toFixed(1)} on this host`,
      );
    }
  } finally {
    asker?.close();
    await dns?.stop();
    await client.close();
    await srv.stop();
    removeDir(dir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
