// The resolver on a record index fed with objects directly: the option
// dependent answers (pods disabled / verified, ttl) and the sync rule.
import assert from 'node:assert/strict';
import type { KubeObject } from '../shared/client';
import { RCODE, Resolver, FORWARD, reverseToIP, type PodsMode } from './answer';
import { RecordIndex, dashedIP } from './records';

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const pod = (name: string, ip: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'app' },
  status: { podIP: ip, podIPs: [{ ip }] },
});

function resolver(pods: PodsMode, opts: { ttl?: number; synced?: boolean } = {}) {
  const index = new RecordIndex();
  index.addNamespace(ns('app'));
  return {
    index,
    r: new Resolver(index, {
      zone: 'cluster.local',
      ttl: opts.ttl ?? 5,
      pods,
      synced: () => opts.synced ?? true,
    }),
  };
}

const ask = (r: Resolver, name: string, type: any = 'A') => {
  const a = r.resolve({ name, type, class: 'IN' });
  assert.notEqual(a, FORWARD);
  return a as Exclude<typeof a, typeof FORWARD>;
};

describe('dns: resolver options', () => {
  it('pods disabled: no pod record', () => {
    const { r } = resolver('disabled');
    assert.equal(ask(r, '10-1-2-3.app.pod.cluster.local').rcode, RCODE.NXDOMAIN);
  });

  it('pods verified: only the IP of a pod in that namespace, while it exists', () => {
    const { r, index } = resolver('verified');
    assert.equal(ask(r, '10-1-2-3.app.pod.cluster.local').rcode, RCODE.NXDOMAIN);
    const p = pod('a', '10.1.2.3');
    index.changePod(undefined, p);
    const a = ask(r, '10-1-2-3.app.pod.cluster.local');
    assert.deepEqual(
      a.answers.map((x: any) => x.data),
      ['10.1.2.3'],
    );
    index.changePod(p, undefined);
    assert.equal(ask(r, '10-1-2-3.app.pod.cluster.local').rcode, RCODE.NXDOMAIN);
  });

  it('uses the ttl option on records and the SOA minimum, the SOA TTL at most 300', () => {
    const { r } = resolver('insecure', { ttl: 600 });
    const a = ask(r, '10-1-2-3.app.pod.cluster.local');
    assert.equal((a.answers[0] as any).ttl, 600);
    const neg = ask(r, 'nope.app.svc.cluster.local');
    assert.equal((neg.authorities[0] as any).ttl, 300);
    assert.equal((neg.authorities[0] as any).data.minimum, 600);
  });

  it('answers SERVFAIL instead of NXDOMAIN before the informers synced', () => {
    const { r } = resolver('insecure', { synced: false });
    assert.equal(ask(r, 'nope.app.svc.cluster.local').rcode, RCODE.SERVFAIL);
  });

  it('reads reverse names and spells endpoint labels as CoreDNS does', () => {
    assert.equal(reverseToIP('4.3.2.1.in-addr.arpa'), '1.2.3.4');
    assert.equal(reverseToIP('1.2.3.in-addr.arpa'), undefined);
    assert.equal(reverseToIP(`1.${'0.'.repeat(29)}d.f.ip6.arpa`), 'fd00::1');
    assert.equal(dashedIP('10.0.0.1'), '10-0-0-1');
    assert.equal(dashedIP('fd00::'), 'fd00--0');
  });
});
