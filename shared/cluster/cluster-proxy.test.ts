// A local cluster's proxy rules removed by the cluster's names, not by its node count: a crashed
// run with more nodes left tables and chains of nodes this run does not have. On the real kernel
// of a network namespace this test makes.
import { strict as assert } from 'node:assert';
import { IptablesBackend, NftablesBackend } from '../../proxy/backend';
import { fixtureOptions, fixtureServices, fixtureSlices } from '../../proxy/fixtures';
import { buildRuleSet } from '../../proxy/model';
import { Netns, commandAvailable, netnsAvailable, removeStaleNamespaces } from '../../proxy/netns-testing';
import {
  ClusterServiceProxies,
  nodeProxyRules,
  nodesWithRules,
  type ServiceProxiesOptions,
} from './cluster-proxy';

const NAMES = { table: 'tkube-crash', chainPrefix: 'TKCRSH' };

describe('cluster proxies: rules left by a crashed run', function () {
  this.timeout(120_000);
  let ns: Netns | undefined;
  before(function () {
    if (!netnsAvailable() || !commandAvailable('nft') || !commandAvailable('iptables-restore')) this.skip();
    removeStaleNamespaces();
    ns = Netns.create('crash');
  });
  after(() => ns?.delete());

  it('finds the nodes of its names in nft and iptables listings, and no other cluster’s', () => {
    const tables = [
      'table ip tkube-crash-1',
      'table ip tkube-crash-12',
      'table ip tkube-crash-x-2',
      'table ip other',
    ];
    const save = [
      ':TKCRSN3-SERVICES - [0:0]',
      ':TKCRN11-SVC-ABC - [0:0]',
      ':TKCRSN-FOO - [0:0]',
      ':OTHERN4-X - [0:0]',
    ];
    assert.deepEqual(nodesWithRules(NAMES, tables.join('\n'), save.join('\n')), [0, 2, 10, 11]);
  });

  it('removes the tables and chains of every node of the cluster, also nodes this run does not have', async () => {
    const rs = buildRuleSet(fixtureServices, fixtureSlices, fixtureOptions);
    // A crashed run with three nodes: node 3 programmed iptables, the others nftables.
    for (const i of [0, 1]) await new NftablesBackend(ns!.runner(), nodeProxyRules(NAMES, i).table).apply(rs);
    await new IptablesBackend(ns!.runner(), nodeProxyRules(NAMES, 2).chainPrefix).apply(rs);
    await new NftablesBackend(ns!.runner(), 'someone-elses').apply(rs);

    const proxies = new ClusterServiceProxies({
      nodes: 1,
      rules: NAMES,
      netns: ns!.name,
    } as ServiceProxiesOptions);
    proxies.removeRules();

    const tables = ns!.sh('nft', 'list', 'tables');
    assert.doesNotMatch(tables, /tkube-crash/);
    assert.match(tables, /someone-elses/, 'other tables are left alone');
    assert.doesNotMatch(ns!.sh('iptables-save'), /TKCRSN/);
  });
});
