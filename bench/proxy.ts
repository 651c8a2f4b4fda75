// Service proxy benchmark (issue 33): the time to render and apply the rule set
// for 1, 100 and 1,000 Services × 10 endpoints, in both modes, on the real
// kernel inside a network namespace made (and deleted) here. Per size: the
// model step, rendering, the first apply (whole replace), a resync (nothing
// changed) and the apply after one endpoint of one Service went. Figures only.
//
//   npm run build && node dist/bench/proxy.js [--sizes 1,100,1000] [--endpoints 10] [--rounds 5]
//
// Needs root and nft / iptables-restore; the namespace goes on the way out, on errors too.
import { parseArgs } from 'node:util';
import { IptablesBackend, NftablesBackend, type ProxyBackend } from '../proxy/backend';
import { buildRuleSet, type ModelOptions } from '../proxy/model';
import { nftReplaceScript, nftTable } from '../proxy/nftables';
import { iptablesRestoreText } from '../proxy/iptables';
import { Netns, netnsAvailable, removeStaleNamespaces } from '../proxy/netns-testing';
import type { EndpointSlice, Service } from '../proxy/types';
import { median, ms } from './lib/stats';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1,100,1000' },
    endpoints: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
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

async function time(fn: () => unknown): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

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
  try {
    console.log(
      'size     mode      model     render    first     resync    one-endpoint-gone  (median of %d)',
      rounds,
    );
    for (const size of args.sizes.split(',').map(Number)) {
      const { svcs, slices } = cluster(size, Number(args.endpoints));
      const rs = buildRuleSet(svcs, slices, OPTIONS);
      const fewer = slices.map((s, i) => (i === 0 ? { ...s, endpoints: s.endpoints!.slice(1) } : s));
      const model = median(
        await Promise.all(
          Array.from({ length: rounds }, () => time(() => buildRuleSet(svcs, slices, OPTIONS))),
        ),
      );
      const backends: [string, () => ProxyBackend, () => unknown][] = [
        [
          'nftables',
          () => new NftablesBackend(ns.runner(), 'tkube-proxy-bench'),
          () => nftReplaceScript(nftTable(rs, 'tkube-proxy-bench')),
        ],
        [
          'iptables',
          () => new IptablesBackend(ns.runner(), 'TKBENCH'),
          () => iptablesRestoreText(rs, 'TKBENCH'),
        ],
      ];
      for (const [mode, make, render] of backends) {
        const renders: number[] = [];
        const firsts: number[] = [];
        const resyncs: number[] = [];
        const changes: number[] = [];
        for (let r = 0; r < rounds; r++) {
          renders.push(await time(render));
          const b = make();
          firsts.push(await time(() => b.apply(rs)));
          resyncs.push(await time(() => b.apply(rs)));
          changes.push(await time(() => b.apply(buildRuleSet(svcs, fewer, OPTIONS))));
          await b.cleanup();
        }
        console.log(
          [
            String(size).padEnd(8),
            mode.padEnd(9),
            ms(model).padEnd(9),
            ms(median(renders)).padEnd(9),
            ms(median(firsts)).padEnd(9),
            ms(median(resyncs)).padEnd(9),
            ms(median(changes)),
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
