// The records of the Kubernetes DNS specification 1.1.0 and CoreDNS's negative
// answers, asked over UDP of the DNS server running against a real apiserver.
import assert from 'node:assert/strict';
import { DnsTestEnv, type Reply } from './testing';

const NS = 'dns-test';
const Z = 'cluster.local';
const fqdn = (s: string) => `${s}.${NS}.svc.${Z}`;

const data = (r: Reply, type = 'A') =>
  (r.answers ?? []).filter((a) => a.type === type).map((a) => (a as any).data);

function assertNegative(r: Reply, rcode: 'NXDOMAIN' | 'NOERROR') {
  assert.equal(r.rcode, rcode);
  assert.equal(r.answers?.length ?? 0, 0);
  assert.equal(r.flag_aa, true);
  const soa = r.authorities?.[0] as any;
  assert.equal(soa?.type, 'SOA');
  assert.equal(soa.name, Z);
  assert.equal(soa.ttl, 5);
  assert.deepEqual(
    { ...soa.data, serial: 0 },
    {
      mname: `ns.dns.${Z}`,
      rname: `hostmaster.${Z}`,
      serial: 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: 5,
    },
  );
}

describe('dns: the cluster zone', function () {
  this.timeout(60_000);
  let env: DnsTestEnv;
  let webIP: string;

  before(async () => {
    env = await DnsTestEnv.start();
    await env.createNamespace(NS);
    const web = await env.createService(NS, 'web', {
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
    });
    webIP = (web.spec as any).clusterIP;
    await env.createService(NS, 'db', {
      clusterIP: 'None',
      selector: { app: 'db' },
      ports: [{ name: 'sql', port: 5432 }],
    });
    await env.createSlice(
      NS,
      'db',
      'db-v4',
      [
        { addresses: ['10.244.1.5'], hostname: 'db-0' },
        { addresses: ['10.244.1.6'] },
        { addresses: ['10.244.1.7'], ready: false },
      ],
      [{ name: 'sql', port: 5432 }],
    );
    await env.createSlice(
      NS,
      'db',
      'db-v6',
      [{ addresses: ['fd00::5'], hostname: 'db-6' }],
      [{ name: 'sql', port: 5432 }],
      'IPv6',
    );
    await env.createService(NS, 'peers', {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { app: 'peers' },
      ports: [{ name: 'peer', port: 7000 }],
    });
    await env.createSlice(
      NS,
      'peers',
      'peers-1',
      [{ addresses: ['10.244.2.9'], ready: false }],
      [{ name: 'peer', port: 7000 }],
    );
    await env.createService(NS, 'empty', {
      clusterIP: 'None',
      selector: { app: 'none' },
      ports: [{ port: 1 }],
    });
    await env.createService(NS, 'ext', { type: 'ExternalName', externalName: 'example.org' });
    await env.createService(NS, 'ext-in', { type: 'ExternalName', externalName: fqdn('web') });
    await env.waitFor(
      () =>
        !!env.dns.index.service(NS, 'ext-in') &&
        env.dns.index.reverseNames('fd00::5').length > 0 &&
        env.dns.index.hasNamespace(NS) &&
        env.dns.index.reverseNames('10.244.2.9').length > 0,
    );
  });

  after(async () => {
    await env?.stop();
  });

  it('answers A of a ClusterIP Service, authoritative, TTL 5, whatever the case of the name', async () => {
    for (const name of [fqdn('web'), `WEB.${NS.toUpperCase()}.SvC.Cluster.LOCAL`]) {
      const r = await env.query(name, 'A');
      assert.equal(r.rcode, 'NOERROR');
      assert.equal(r.flag_aa, true);
      assert.deepEqual(data(r), [webIP]);
      assert.equal(r.answers![0].name, name);
      assert.equal((r.answers![0] as any).ttl, 5);
    }
  });

  it('answers NODATA with the SOA for AAAA of an IPv4-only Service, never NXDOMAIN', async () => {
    assertNegative(await env.query(fqdn('web'), 'AAAA'), 'NOERROR');
  });

  it('answers SRV of the named ports of a ClusterIP Service, target the Service name, its A in the additional section', async () => {
    const r = await env.query(`_http._tcp.${fqdn('web')}`, 'SRV');
    assert.deepEqual(data(r, 'SRV'), [{ priority: 0, weight: 100, port: 80, target: fqdn('web') }]);
    assert.deepEqual(
      (r.additionals ?? []).filter((a) => a.type === 'A').map((a) => [a.name, (a as any).data]),
      [[fqdn('web'), webIP]],
    );
    const udp = await env.query(`_dns._udp.${fqdn('web')}`, 'SRV');
    assert.deepEqual(
      data(udp, 'SRV').map((s: any) => s.port),
      [53],
    );
    assertNegative(await env.query(`_http._udp.${fqdn('web')}`, 'SRV'), 'NXDOMAIN');
    const all = await env.query(fqdn('web'), 'SRV');
    assert.deepEqual(
      data(all, 'SRV')
        .map((s: any) => [s.port, s.weight])
        .sort(),
      [
        [53, 50],
        [80, 50],
      ],
    );
  });

  it('answers PTR of a Service IP with the Service name', async () => {
    const rev = webIP.split('.').reverse().join('.') + '.in-addr.arpa';
    const r = await env.query(rev, 'PTR');
    assert.equal(r.rcode, 'NOERROR');
    assert.deepEqual(data(r, 'PTR'), [fqdn('web')]);
  });

  it('answers A and AAAA of a headless Service with each ready endpoint', async () => {
    assert.deepEqual(data(await env.query(fqdn('db'), 'A')).sort(), ['10.244.1.5', '10.244.1.6']);
    assert.deepEqual(data(await env.query(fqdn('db'), 'AAAA'), 'AAAA'), ['fd00::5']);
  });

  it('answers the not-ready endpoints of a headless Service with publishNotReadyAddresses', async () => {
    assert.deepEqual(data(await env.query(fqdn('peers'), 'A')), ['10.244.2.9']);
  });

  it('answers NXDOMAIN for a headless Service without ready endpoints', async () => {
    assertNegative(await env.query(fqdn('empty'), 'A'), 'NXDOMAIN');
  });

  it('answers an endpoint by its hostname or, without one, by its dashed IP', async () => {
    assert.deepEqual(data(await env.query(`db-0.${fqdn('db')}`, 'A')), ['10.244.1.5']);
    assert.deepEqual(data(await env.query(`10-244-1-6.${fqdn('db')}`, 'A')), ['10.244.1.6']);
    assert.deepEqual(data(await env.query(`db-6.${fqdn('db')}`, 'AAAA'), 'AAAA'), ['fd00::5']);
    assertNegative(await env.query(`10-244-1-7.${fqdn('db')}`, 'A'), 'NXDOMAIN');
  });

  it('answers SRV of a headless Service with one record per ready endpoint, target its own name', async () => {
    const r = await env.query(`_sql._tcp.${fqdn('db')}`, 'SRV');
    assert.deepEqual(
      data(r, 'SRV')
        .map((s: any) => [s.target, s.port, s.weight])
        .sort(),
      [
        [`10-244-1-6.${fqdn('db')}`, 5432, 33],
        [`db-0.${fqdn('db')}`, 5432, 33],
        [`db-6.${fqdn('db')}`, 5432, 33],
      ],
    );
    assert.deepEqual((r.additionals ?? []).map((a) => [a.name, a.type]).sort(), [
      [`10-244-1-6.${fqdn('db')}`, 'A'],
      [`db-0.${fqdn('db')}`, 'A'],
      [`db-6.${fqdn('db')}`, 'AAAA'],
    ]);
  });

  it('answers PTR of endpoint IPs, IPv4 and IPv6, with the endpoint name', async () => {
    assert.deepEqual(data(await env.query('5.1.244.10.in-addr.arpa', 'PTR'), 'PTR'), [`db-0.${fqdn('db')}`]);
    const nibbles = 'fd00000000000000000000000000000' + '5';
    const ip6 = nibbles.split('').reverse().join('.') + '.ip6.arpa';
    assert.deepEqual(data(await env.query(ip6, 'PTR'), 'PTR'), [`db-6.${fqdn('db')}`]);
  });

  it('answers an ExternalName Service with a CNAME, followed inside the zone', async () => {
    const r = await env.query(fqdn('ext'), 'A');
    assert.equal(r.rcode, 'NOERROR');
    assert.deepEqual(data(r, 'CNAME'), ['example.org']);
    assert.deepEqual(data(await env.query(fqdn('ext'), 'CNAME'), 'CNAME'), ['example.org']);
    const inZone = await env.query(fqdn('ext-in'), 'A');
    assert.deepEqual(data(inZone, 'CNAME'), [fqdn('web')]);
    assert.deepEqual(data(inZone), [webIP]);
    assertNegative(await env.query(`_http._tcp.${fqdn('ext')}`, 'SRV'), 'NXDOMAIN');
  });

  it('answers pod records a-b-c-d.<ns>.pod.<zone> for any IP in an existing namespace (pods insecure)', async () => {
    assert.deepEqual(data(await env.query(`10-244-9-9.${NS}.pod.${Z}`, 'A')), ['10.244.9.9']);
    assert.deepEqual(data(await env.query(`fd00--9.${NS}.pod.${Z}`, 'AAAA'), 'AAAA'), ['fd00::9']);
    assertNegative(await env.query(`10-244-9-9.no-such-ns.pod.${Z}`, 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`not-an-ip.${NS}.pod.${Z}`, 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`${NS}.pod.${Z}`, 'A'), 'NOERROR');
  });

  it('answers the dns-version TXT record 1.1.0 with TTL 28800', async () => {
    const r = await env.query(`dns-version.${Z}`, 'TXT');
    assert.deepEqual(
      data(r, 'TXT').map((t: Buffer[]) => t.map(String)),
      [['1.1.0']],
    );
    assert.equal((r.answers![0] as any).ttl, 28800);
  });

  it('answers NXDOMAIN for unknown Services, namespaces and malformed names, NODATA for names that exist', async () => {
    assertNegative(await env.query(fqdn('nope'), 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`web.no-such-ns.svc.${Z}`, 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`a.b.c.d.${fqdn('web')}`, 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`web.${NS}.other.${Z}`, 'A'), 'NXDOMAIN');
    assertNegative(await env.query(`${NS}.svc.${Z}`, 'A'), 'NOERROR');
    assertNegative(await env.query(`svc.${Z}`, 'A'), 'NOERROR');
    assertNegative(await env.query(Z, 'A'), 'NOERROR');
    assertNegative(await env.query(fqdn('web'), 'TXT'), 'NOERROR');
    assertNegative(await env.query(fqdn('web'), 'MX'), 'NOERROR');
    assertNegative(await env.query(fqdn('nope'), 'MX'), 'NXDOMAIN');
    assertNegative(await env.query(`dns-version.${Z}`, 'A'), 'NXDOMAIN');
  });

  it('answers SOA and NS at the apex and refuses zone transfers', async () => {
    const soa = await env.query(Z, 'SOA');
    assert.equal(soa.answers?.[0]?.type, 'SOA');
    assert.deepEqual(data(await env.query(Z, 'NS'), 'NS'), [`ns.dns.${Z}`]);
    assert.equal((await env.query(Z, 'AXFR', { tcp: true })).rcode, 'REFUSED');
  });

  it('answers SERVFAIL for names outside the zones when no upstream is configured', async () => {
    assert.equal((await env.query('example.com', 'A')).rcode, 'SERVFAIL');
    // A reverse name that is no cluster IP falls through to the (absent) upstream too.
    assert.equal((await env.query('4.3.2.1.in-addr.arpa', 'PTR')).rcode, 'SERVFAIL');
  });

  it('sees a new, changed and deleted Service and EndpointSlice within a second', async () => {
    const svc = await env.createService(NS, 'late', { selector: { app: 'late' }, ports: [{ port: 80 }] });
    const ip = (svc.spec as any).clusterIP;
    assert.deepEqual(data(await env.eventually(fqdn('late'), 'A', (r) => data(r).length > 0)), [ip]);

    await env.createService(NS, 'late-hl', {
      clusterIP: 'None',
      selector: { app: 'late' },
      ports: [{ port: 80 }],
    });
    const slice = await env.createSlice(
      NS,
      'late-hl',
      'late-hl-1',
      [{ addresses: ['10.244.3.1'] }],
      [{ port: 80 }],
    );
    assert.deepEqual(data(await env.eventually(fqdn('late-hl'), 'A', (r) => data(r).length > 0)), [
      '10.244.3.1',
    ]);
    const slices = env.client.resource('endpointslices.discovery.k8s.io').namespace(NS);
    await slices.update({
      ...slice,
      endpoints: [{ addresses: ['10.244.3.2'], conditions: { ready: true } }],
    } as any);
    assert.deepEqual(data(await env.eventually(fqdn('late-hl'), 'A', (r) => data(r)[0] === '10.244.3.2')), [
      '10.244.3.2',
    ]);

    await env.client.resource('services').namespace(NS).delete('late');
    assert.equal((await env.eventually(fqdn('late'), 'A', (r) => r.rcode === 'NXDOMAIN')).rcode, 'NXDOMAIN');
  });
});
