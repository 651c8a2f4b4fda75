// Service proxy benchmark (issue 33): applying the rule set for 1, 100, 1,000
// and 10,000 Services × 10 endpoints, in both modes, on the real kernel inside a
// network namespace made (and deleted) here. Per size and mode: the first apply
// (whole replace); a full resync of an unchanged state (wall time and CPU: this
// process plus nft/iptables-restore); and the time from an EndpointSlice change
// (one endpoint of one Service gone) to the rules in place — model, render and
// kernel — as a partial sync (nftables) and as a full sync (what every nftables
// sync was before partial syncs; iptables always rewrites its chains). Figures only.
//
//   npm run build && node dist/bench/proxy.js [--sizes 1,100,1000,10000] [--endpoints 10]
//     [--rounds 3] [--modes nftables,iptables]
//
// Needs root and nft / iptables-restore; the namespace goes on the way out, on errors too.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { IptablesBackend, NftablesBackend, type ProxyBackend } from '../proxy/backend';
import { buildRuleSet, type ModelOptions } from '../proxy/model';
import { Netns, netnsAvailable, removeStaleNamespaces } from '../proxy/netns-testing';
import type { EndpointSlice, Service } from '../proxy/types';
import { median, ms } from './lib/stats';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1,100,1000,10000' },
    endpoints: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    modes: { type: 'string', default: 'nftables,iptables' },
  },
});

const OPTIONS: ModelOptions = {
  nodeName: 'node-a',
  nodeIPs: ['192.168.50.2'],
  clusterCIDRs: ['10.244.0.0/16'],
  serviceCIDRs: ['10.96.0.0/16'],
  masqueradeAll: false,
  nodePortAddresses: [],
};

function cluster(services: number, endpoints: number): { svcs: Service[]; slices: EndpointSlice[] } {
  const svcs: Service[] = [];
  const slices: EndpointSlice[] = [];
  for (let i = 0; i < services; i++) {
    const name = `svc-${i}`;
    svcs.push({
      metadata: { namespace: 'default', name },
      spec: { clusterIP: `10.96.${i >> 8}.${i & 255}`, ports: [{ name: 'http', port: 80 }] },
    });
    slices.push({
      metadata: { namespace: 'default', name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: Array.from({ length: endpoints }, (_, e) => ({
        addresses: [`10.244.${((i * endpoints + e) >> 8) & 255}.${(i * endpoints + e) & 255}`],
        nodeName: e % 2 ? 'node-a' : 'node-b',
        conditions: { ready: true },
      })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
  }
  return { svcs, slices };
}

/** CPU milliseconds of this process and of its reaped children (nft, iptables-restore). */
function cpuMs(): number {
  const self = process.cpuUsage();
  // /proc/self/stat fields 16 and 17 (after the command in parentheses): cutime, cstime in ticks.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[13]) + Number(fields[14]);
  return (self.user + self.system) / 1000 + ticks * 10;
}

async function measure(fn: () => unknown): Promise<{ wall: number; cpu: number }> {
  const cpu = cpuMs();
  const t = process.hrtime.bigint();
  await fn();
  return { wall: Number(process.hrtime.bigint() - t) / 1e6, cpu: cpuMs() - cpu };
}

const cell = (samples: { wall: number; cpu: number }[]) =>
  `${ms(median(samples.map((s) => s.wall)))} (${ms(median(samples.map((s) => s.cpu)))} cpu)`.padEnd(24);

async function main(): Promise<void> {
  if (!netnsAvailable()) throw new Error('needs root and iproute2 (network namespaces)');
  removeStaleNamespaces();
  const ns = Netns.create('bench');
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      ns.delete();
      process.exit(130);
    });
  const rounds = Number(args.rounds);
  const modes = args.modes.split(',');
  try {
    console.log(
      `${'size'.padEnd(7)}${'mode'.padEnd(10)}${'first'.padEnd(24)}${'full resync'.padEnd(24)}` +
        `${'change: partial'.padEnd(24)}change: full   (median of ${rounds}; wall (cpu) ms)`,
    );
    for (const size of args.sizes.split(',').map(Number)) {
      const { svcs, slices } = cluster(size, Number(args.endpoints));
      const rs = buildRuleSet(svcs, slices, OPTIONS);
      const fewer = slices.map((s, i) => (i === 0 ? { ...s, endpoints: s.endpoints!.slice(1) } : s));
      const backends: [string, () => ProxyBackend][] = [
        ['nftables', () => new NftablesBackend(ns.runner(), 'tkube-proxy-bench')],
        ['iptables', () => new IptablesBackend(ns.runner(), 'TKBENCH')],
      ];
      for (const [mode, make] of backends.filter(([m]) => modes.includes(m))) {
        const firsts = [];
        const resyncs = [];
        const partials = [];
        const fulls = [];
        for (let r = 0; r < rounds; r++) {
          const b = make();
          firsts.push(await measure(() => b.apply(rs, { full: true })));
          resyncs.push(await measure(() => b.apply(rs, { full: true })));
          // From the changed EndpointSlice to the rules in place: model, render, kernel.
          const change = (full: boolean) =>
            measure(() => b.apply(buildRuleSet(svcs, fewer, OPTIONS), { full }));
          if (mode === 'nftables') {
            partials.push(await change(false));
            await b.apply(rs);
          }
          fulls.push(await change(true));
          await b.cleanup();
        }
        console.log(
          [
            String(size).padEnd(6),
            mode.padEnd(9),
            cell(firsts),
            cell(resyncs),
            partials.length ? cell(partials) : '(= full)'.padEnd(24),
            cell(fulls),
          ].join(' '),
        );
      }
    }
  } finally {
    ns.delete();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
