import { buildRuleSet } from './model';
import { fixtureOptions, fixtureServices, fixtureSlices } from './fixtures';
import { assertGolden } from './golden';
import { nftPartialScript, nftReplaceScript, nftTable, nftUpdateScript } from './nftables';
import { iptablesRestoreText } from './iptables';

const TABLE = 'tkube-proxy';
const all = () => buildRuleSet(fixtureServices, fixtureSlices, fixtureOptions);
/** The same cluster after web lost its endpoint on node-b and kube-dns was deleted. */
const after = () =>
  buildRuleSet(
    fixtureServices.filter((s) => s.metadata.name !== 'kube-dns'),
    fixtureSlices.map((s) =>
      s.metadata.name.startsWith('web-')
        ? { ...s, endpoints: s.endpoints!.filter((e) => e.nodeName !== 'node-b') }
        : s,
    ),
    fixtureOptions,
  );

describe('proxy renderers (golden)', () => {
  it('nftables: the whole table replaced in one transaction', () => {
    assertGolden('fixtures.nft', nftReplaceScript(nftTable(all(), TABLE)));
  });

  it('nftables: an in-place rewrite deletes stale chains and sets', () => {
    assertGolden('fixtures-update.nft', nftUpdateScript(nftTable(all(), TABLE), nftTable(after(), TABLE)));
  });

  it('nftables: a partial sync rewrites only the changed chains and elements, flushes stale chains', () => {
    const prev = nftTable(all(), TABLE);
    const next = nftTable(after(), TABLE);
    const flushedEarlier = 'endpoint-OLDOLDOL-default/gone/tcp/http__10.244.9.9/80';
    assertGolden('fixtures-partial.nft', nftPartialScript(prev, next, [flushedEarlier])!);
  });

  it('nftables: --masquerade-all and listed NodePort addresses', () => {
    const rs = buildRuleSet(fixtureServices.slice(0, 1), fixtureSlices, {
      ...fixtureOptions,
      masqueradeAll: true,
      nodePortAddresses: ['primary'],
    });
    assertGolden('masquerade-all.nft', nftReplaceScript(nftTable(rs, TABLE)));
  });

  // Two nodes on one kernel: each proxy's table handles its own pods' connections and those to its IPs.
  const scoped = () =>
    buildRuleSet(fixtureServices.slice(0, 1), fixtureSlices, {
      ...fixtureOptions,
      nodePortAddresses: ['primary'],
      scopeSourceCIDRs: ['10.244.0.0/24'],
    });

  it('nftables: a table scoped to one node of a shared kernel', () => {
    assertGolden('scoped.nft', nftReplaceScript(nftTable(scoped(), TABLE)));
  });

  it('iptables: chains scoped to one node of a shared kernel', () => {
    assertGolden('scoped.iptables', iptablesRestoreText(scoped()));
  });

  it('iptables: nat and filter chains for iptables-restore --noflush', () => {
    assertGolden('fixtures.iptables', iptablesRestoreText(all()));
  });

  it('iptables: chains no longer rendered are flushed and deleted', () => {
    const existing = {
      filter: ['TKUBE-SERVICES'],
      nat: ['TKUBE-SERVICES', 'TKUBE-SVC-TCOU7JCQXEZGVUNU', 'TKUBE-SEP-OLDOLDOLDOLDOLD1'],
    };
    assertGolden('fixtures-update.iptables', iptablesRestoreText(after(), 'TKUBE', existing));
  });
});
