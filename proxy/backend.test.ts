// The atomic apply on the real kernel, inside network namespaces this test makes.
import { strict as assert } from 'node:assert';
import { logger, setSilent } from '../shared/log';
import { IptablesBackend, NftablesBackend, chooseBackend } from './backend';
import { commandRunner } from './exec';
import { buildRuleSet, type RuleSet } from './model';
import { fixtureOptions, fixtureServices, fixtureSlices } from './fixtures';
import { Netns, commandAvailable, netnsAvailable, removeStaleNamespaces } from './netns-testing';

const TABLE = 'tkube-proxy-test';
const initial = () => buildRuleSet(fixtureServices, fixtureSlices, fixtureOptions);
const later = () =>
  buildRuleSet(
    fixtureServices.filter((s) => s.metadata.name !== 'kube-dns'),
    fixtureSlices.filter((s) => !s.metadata.name.startsWith('web-')),
    fixtureOptions,
  );
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
      await backend.apply(initial());
      assert.match(ns.sh('nft', 'list', 'set', 'ip', TABLE, affinity), /10\.244\.9\.9/);

      await backend.apply(later());
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
