// The host settings a cluster's pods need, changed and undone in a network
// namespace of the test's own (forwarding sysctls and iptables are per
// namespace): forwarding off and FORWARD's policy DROP, as on a host with docker;
// enabled and the pod CIDRs accepted, recorded; a second start (after a crash)
// adds nothing twice; restored to what it was; with two clusters, the sysctls
// stay until the last one stops.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Netns, commandAvailable, netnsAvailable, removeStaleNamespaces } from '../../proxy/netns-testing';

const MODULE = join(__dirname, 'host-forwarding.js');
const SYSCTLS = ['/proc/sys/net/ipv4/ip_forward', '/proc/sys/net/bridge/bridge-nf-call-iptables'];

describe('host forwarding for the pods', function () {
  this.timeout(30_000);
  let ns: Netns;
  let dir: string;
  before(function () {
    if (!netnsAvailable() || !commandAvailable('iptables')) this.skip();
    removeStaleNamespaces();
    ns = Netns.create('fwd');
    dir = mkdtempSync(join(tmpdir(), 'tkube-fwd-'));
  });
  after(() => {
    ns?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Calls one of host-forwarding.ts's functions in the namespace; its result. */
  const call = (fn: string, ...args: unknown[]) =>
    JSON.parse(
      execFileSync(
        'ip',
        [
          'netns',
          'exec',
          ns.name,
          process.execPath,
          '-e',
          `console.log(JSON.stringify(require(${JSON.stringify(MODULE)}).${fn}(...${JSON.stringify(args)}) ?? null))`,
        ],
        { encoding: 'utf8' },
      ),
    );
  const values = () => SYSCTLS.map((p) => (existsSync(p) ? ns.sh('cat', p).trim() : '-'));
  const accepts = () =>
    ns
      .sh('iptables', '-S', 'FORWARD')
      .split('\n')
      .filter((l) => l.includes('tkube test'));

  it('enables forwarding and accepts the pod CIDRs where FORWARD drops, records it, and undoes it', () => {
    for (const p of SYSCTLS) if (existsSync(p)) ns.sh('sh', '-c', `echo 0 > ${p}`);
    ns.sh('iptables', '-P', 'FORWARD', 'DROP');
    const before = values();
    const file = join(dir, 'host-settings.json');
    const cidrs = ['10.9.0.0/24', '10.9.1.0/24'];

    const changed = call('allowPodForwarding', file, cidrs, 'tkube test');
    assert.ok(changed.includes('net.ipv4.ip_forward=1'), changed);
    assert.deepEqual(
      values(),
      before.map((v) => (v === '-' ? '-' : '1')),
    );
    assert.equal(accepts().length, 4, accepts().join('\n'));
    assert.ok(existsSync(file));

    // A start after a crash: what the crashed run recorded is undone first, nothing is doubled.
    call('allowPodForwarding', file, cidrs, 'tkube test');
    assert.equal(accepts().length, 4, accepts().join('\n'));

    assert.match(call('restoreHostSettings', file), /host network setting/);
    assert.deepEqual(values(), before);
    assert.deepEqual(accepts(), []);
    assert.match(ns.sh('iptables', '-S', 'FORWARD'), /^-P FORWARD DROP$/m);
    assert.equal(existsSync(file), false);
  });

  it('keeps the sysctls while another cluster runs: the first to stop hands them to it, the last restores them', () => {
    for (const p of SYSCTLS) if (existsSync(p)) ns.sh('sh', '-c', `echo 0 > ${p}`);
    ns.sh('iptables', '-P', 'FORWARD', 'DROP');
    const before = values();
    const [a, b] = [join(dir, 'a.json'), join(dir, 'b.json')];
    assert.ok(call('allowPodForwarding', a, ['10.9.0.0/24'], 'tkube test').includes('net.ipv4.ip_forward=1'));
    // The second cluster finds forwarding on: it changes (and records) only its own rules.
    assert.deepEqual(call('allowPodForwarding', b, ['10.8.0.0/24'], 'tkube test'), [
      'iptables FORWARD accepts 10.8.0.0/24',
    ]);
    const on = values();
    assert.match(call('restoreHostSettings', a, [b]), /kept for a cluster still running/);
    assert.deepEqual(values(), on, 'the other cluster still forwards');
    assert.deepEqual(
      accepts().map((r) => r.split(' ')[3]),
      ['10.8.0.0/24', '10.8.0.0/24'],
      "the first cluster's rules are gone, the other's stay",
    );
    call('restoreHostSettings', b, []);
    assert.deepEqual(values(), before);
    assert.deepEqual(accepts(), []);
  });
});
