// The atomic apply on the real kernel, inside network namespaces this test makes.
import { strict as assert } from 'node:assert';
import { logger, setSilent } from '../shared/log';
import { IptablesBackend, NftablesBackend, chooseBackend } from './backend';
import { commandRunner, type Runner } from './exec';
import { buildRuleSet, type RuleSet } from './model';
import { fixtureOptions, fixtureServices, fixtureSlices } from './fixtures';
import {
  Netns,
  commandAvailable,
  netnsAvailable,
  linkNamespaces,
  nftTableContents,
  removeStaleNamespaces,
  stopProcess,
  tcpEcho,
  tcpProbe,
} from './netns-testing';
import { service, slice, ep } from './fixtures';

const TABLE = 'tkube-proxy-test';
const initial = () => buildRuleSet(fixtureServices, fixtureSlices, fixtureOptions);
const later = () =>
  buildRuleSet(
    fixtureServices.filter((s) => s.metadata.name !== 'kube-dns'),
    fixtureSlices.filter((s) => !s.metadata.name.startsWith('web-')),
    fixtureOptions,
  );
/** web lost its endpoint on node-b (a verdict map element and a service chain change). */
const fewerWeb = () =>
  buildRuleSet(
    fixtureServices,
    fixtureSlices.map((s) =>
      s.metadata.name.startsWith('web-')
        ? { ...s, endpoints: s.endpoints!.filter((e) => e.nodeName !== 'node-b') }
        : s,
    ),
    fixtureOptions,
  );
/** The `nft -f -` scripts a runner was given. */
function recording(run: Runner): { run: Runner; scripts: string[] } {
  const scripts: string[] = [];
  return {
    scripts,
    run: (cmd, args, stdin) => {
      if (cmd === 'nft' && args[0] === '-f' && stdin !== undefined) scripts.push(stdin);
      return run(cmd, args, stdin);
    },
  };
}
/** A rule set the kernel refuses (an address that is none). */
function broken(): RuleSet {
  const rs = later();
  rs.servicePorts[0] = { ...rs.servicePorts[0], clusterIP: '10.96.0.999' };
  return rs;
}

describe('proxy backends on the kernel (network namespace)', function () {
  let ns: Netns;
  let fresh: Netns;
  before(function () {
    if (!netnsAvailable() || !commandAvailable('nft') || !commandAvailable('iptables-restore')) this.skip();
    setSilent(process.env.TKUBE_TEST_LOGS !== '1');
    removeStaleNamespaces();
    ns = Netns.create('apply');
    fresh = Netns.create('fresh');
  });
  after(() => {
    ns?.delete();
    fresh?.delete();
  });

  describe('nftables', () => {
    const list = (n: Netns) => n.sh('nft', 'list', 'table', 'ip', TABLE);

    it('replaces the table whole, in place, and keeps the old one when the new one is refused', async () => {
      const backend = new NftablesBackend(ns.runner(), TABLE);
      await backend.apply(initial());
      assert.match(list(ns), /chain service-FY5PMXPG-kube-system\/kube-dns\/udp\/dns/);
      assert.match(list(ns), /set affinity-/);
      // A client the packet path put in an affinity set stays there across a rewrite.
      const affinity = /set (affinity-\S+)/.exec(list(ns))![1];
      ns.sh('nft', 'add', 'element', 'ip', TABLE, affinity, '{ 10.244.9.9 }');
      await backend.apply(initial(), { full: true });
      assert.match(ns.sh('nft', 'list', 'set', 'ip', TABLE, affinity), /10\.244\.9\.9/);

      await backend.apply(later(), { full: true });
      // The rewritten table is exactly what a fresh install of the new rule set gives.
      await new NftablesBackend(fresh.runner(), TABLE).apply(later());
      const updated = list(ns);
      assert.equal(updated, list(fresh));
      assert.doesNotMatch(updated, /kube-dns|affinity-|default\/web/);

      await assert.rejects(backend.apply(broken()), /nft -f - failed/);
      assert.equal(list(ns), updated, 'a refused rule set leaves the previous one in place');
      // After a failure the next apply replaces the table whole.
      await backend.apply(initial());
      assert.match(list(ns), /kube-dns/);

      await backend.cleanup();
      assert.doesNotMatch(ns.sh('nft', 'list', 'tables'), new RegExp(TABLE));
      await backend.cleanup(); // no table: still fine
    });
  });

  describe('nftables partial syncs', () => {
    const fullInstall = async (rs: RuleSet) => {
      await new NftablesBackend(fresh.runner(), TABLE).apply(rs);
      return nftTableContents(fresh, TABLE);
    };

    it('leave exactly the table a full sync of the same state gives, touching only what changed', async () => {
      const rec = recording(ns.runner());
      const backend = new NftablesBackend(rec.run, TABLE, { staleChainDelayMs: 0 });
      await backend.apply(initial(), { full: true });
      for (const [what, state] of [
        ['one endpoint gone', fewerWeb],
        ['a Service and all endpoints of another gone', later],
        ['everything back', initial],
      ] as const) {
        const before = rec.scripts.length;
        await backend.apply(state());
        assert.equal(nftTableContents(ns, TABLE), await fullInstall(state()), what);
        assert.equal(rec.scripts.length, before + 1, `${what}: one transaction`);
        assert.doesNotMatch(rec.scripts.at(-1)!, /(flush|delete) table/, `${what}: a partial sync`);
      }
      // What the packet path put in an affinity set stays.
      const affinity = /set (affinity-\S+)/.exec(ns.sh('nft', 'list', 'table', 'ip', TABLE))![1];
      ns.sh('nft', 'add', 'element', 'ip', TABLE, affinity, '{ 10.244.9.9 }');
      const oneEndpoint = (await backend.apply(fewerWeb()), rec.scripts.at(-1)!);
      assert.match(ns.sh('nft', 'list', 'set', 'ip', TABLE, affinity), /10\.244\.9\.9/);
      assert.doesNotMatch(
        oneEndpoint,
        /kube-dns|default\/lb|default\/np/,
        'unchanged Services not rewritten',
      );
      const before = rec.scripts.length;
      await backend.apply(fewerWeb());
      assert.equal(rec.scripts.length, before, 'nothing changed: no transaction');
      // A full sync of the same state rewrites everything and changes nothing.
      const partial = nftTableContents(ns, TABLE);
      await backend.apply(fewerWeb(), { full: true });
      assert.match(rec.scripts.at(-1)!, /flush table/);
      assert.equal(nftTableContents(ns, TABLE), partial);
      ns.sh('nft', 'flush', 'set', 'ip', TABLE, affinity);
      assert.equal(nftTableContents(ns, TABLE), await fullInstall(fewerWeb()));
      await backend.cleanup();
    });

    it('delete the chains they flushed only in a sync at least the delay later', async () => {
      let now = 1_000_000;
      const backend = new NftablesBackend(ns.runner(), TABLE, { now: () => now });
      await backend.apply(initial(), { full: true });
      await backend.apply(later());
      const stale = backend.staleChains;
      assert.ok(
        stale.some((c) => c.includes('kube-dns')),
        stale.join(', '),
      );
      for (const c of stale) assert.match(ns.sh('nft', 'list', 'chain', 'ip', TABLE, c), /\{\s*\}/);
      now += 500;
      await backend.apply(later());
      assert.deepEqual(backend.staleChains, stale, 'kept within the delay');
      now += 500;
      await backend.apply(later());
      assert.deepEqual(backend.staleChains, []);
      assert.equal(nftTableContents(ns, TABLE), await fullInstall(later()));
      await backend.cleanup();
    });
  });

  describe('nftables loadBalancerSourceRanges', () => {
    it('let only the listed clients reach the LB IP; other clients are dropped, the ClusterIP stays open', async () => {
      const [podA, podB, lbIP] = ['10.244.1.5', '10.244.1.6', '198.51.100.5'];
      const node = Netns.create('lb-node');
      const pod = Netns.create('lb-pod');
      const echo = [];
      try {
        linkNamespaces(node, '10.244.1.1', pod, [podA, podB]);
        node.sh('sysctl', '-qw', 'net.ipv4.ip_forward=1');
        node.sh('ip', 'route', 'add', '10.96.0.0/16', 'dev', 'veth0');
        echo.push(await tcpEcho(pod, podA, 8080));
        const lb = (ranges: string[]) =>
          service(
            'default',
            'lb',
            {
              type: 'LoadBalancer',
              clusterIP: '10.96.0.70',
              ports: [{ port: 80, nodePort: 30080 }],
              loadBalancerSourceRanges: ranges,
            },
            { status: { loadBalancer: { ingress: [{ ip: lbIP }] } } },
          );
        const rules = (ranges: string[]) =>
          buildRuleSet([lb(ranges)], [slice('default', 'lb', [ep(podA, 'node-a')], [{ port: 8080 }])], {
            ...fixtureOptions,
            nodeIPs: ['10.244.1.1'],
          });
        const backend = new NftablesBackend(node.runner(), TABLE);
        await backend.apply(rules([`${podA}/32`]));
        assert.equal(await tcpProbe(pod, lbIP, 80, 3000, podA), podA, 'a client in the ranges');
        assert.equal(await tcpProbe(pod, lbIP, 80, 1500, podB), 'timeout', 'a client outside: dropped');
        assert.equal(await tcpProbe(node, '10.96.0.70', 80), podA, 'the ClusterIP is not guarded');
        await backend.apply(rules([]));
        assert.equal(await tcpProbe(pod, lbIP, 80, 3000, podB), podA, 'no ranges: any client');
      } finally {
        for (const e of echo) await stopProcess(e);
        node.delete();
        pod.delete();
      }
    });
  });

  describe('iptables', () => {
    const save = () => ns.sh('iptables-save').replace(/^#.*\n/gm, '');

    it('rewrites only its own chains, deletes stale ones, keeps them when refused, and cleans up', async () => {
      ns.sh('iptables', '-t', 'nat', '-N', 'SOMEONE-ELSES');
      ns.sh('iptables', '-t', 'nat', '-A', 'SOMEONE-ELSES', '-j', 'RETURN');
      const backend = new IptablesBackend(ns.runner(), 'TKUBE');
      await backend.apply(initial());
      await backend.apply(initial()); // the jump rules are not added twice
      let text = save();
      assert.match(text, /:TKUBE-SVC-TCOU7JCQXEZGVUNU/);
      assert.equal(text.match(/-A PREROUTING .*-j TKUBE-SERVICES/g)?.length, 1);

      await backend.apply(later());
      text = save();
      assert.doesNotMatch(text, /TKUBE-SVC-TCOU7JCQXEZGVUNU/, 'the stale kube-dns chain is deleted');
      const good = text;

      await assert.rejects(backend.apply(broken()), /iptables-restore/);
      assert.equal(save(), good, 'a refused rule set leaves the previous one in place');

      await backend.cleanup();
      text = save();
      assert.doesNotMatch(text, /TKUBE/);
      assert.match(text, /-A SOMEONE-ELSES -j RETURN/, 'other chains are left alone');
    });
  });

  it('chooses nftables when nft is there, iptables when it is not', async () => {
    const log = logger('proxy-test');
    const o = { nftTable: TABLE, iptablesPrefix: 'TKUBE', log };
    assert.equal((await chooseBackend({ ...o, run: ns.runner(), mode: '' })).mode, 'nftables');
    assert.equal((await chooseBackend({ ...o, run: ns.runner(), mode: 'iptables' })).mode, 'iptables');
    // A host without nft (spawn fails as it does for a missing executable): the fallback.
    const runNoNft = (cmd: string, args: string[], stdin?: string) =>
      cmd === 'nft' ? commandRunner()('/nonexistent/nft', args, stdin) : ns.runner()(cmd, args, stdin);
    assert.equal((await chooseBackend({ ...o, run: runNoNft, mode: 'nftables' })).mode, 'iptables');
    await assert.rejects(chooseBackend({ ...o, run: ns.runner(), mode: 'ipvs' }), /invalid proxy mode/);
  });
});
