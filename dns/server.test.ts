// The DNS wire of the server: TCP, truncation of a large answer over UDP and
// the same answer whole over TCP, EDNS0, malformed messages answered FORMERR,
// and the health, ready and metrics ports.
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { DnsTestEnv, queryBytes, sendTcp, sendUdp } from './testing';

const NS = 'dns-wire';
const BIG = `big.${NS}.svc.cluster.local`;
const ENDPOINTS = 60;

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('dns: the wire', function () {
  this.timeout(60_000);
  let env: DnsTestEnv;

  before(async () => {
    env = await DnsTestEnv.start();
    await env.createNamespace(NS);
    await env.createService(NS, 'big', {
      clusterIP: 'None',
      selector: { app: 'big' },
      ports: [{ port: 80 }],
    });
    const addresses = Array.from({ length: ENDPOINTS }, (_, i) => ({ addresses: [`10.244.7.${i + 1}`] }));
    await env.createSlice(NS, 'big', 'big-1', addresses, [{ port: 80 }]);
    await env.waitFor(() => {
      const svc = env.dns.index.service(NS, 'big');
      return !!svc && env.dns.index.endpoints(svc).length === ENDPOINTS;
    });
  });

  after(async () => {
    await env?.stop();
  });

  it('answers over TCP as over UDP', async () => {
    const r = await env.query(`kubernetes.default.svc.cluster.local`, 'A', { tcp: true });
    assert.equal(r.rcode, 'NOERROR');
    assert.equal(r.answers?.length, 1);
    assert.deepEqual(r.answers, (await env.query(`kubernetes.default.svc.cluster.local`, 'A')).answers);
  });

  it('truncates a large answer over UDP with the TC bit, and sends it whole over TCP', async () => {
    const udp = await sendUdp(env.dns.dnsPort, queryBytes(BIG, 'A'));
    assert.ok(udp.length <= 512, `UDP answer of ${udp.length} bytes`);
    const cut = dnsPacket.decode(udp) as any;
    assert.equal(cut.flag_tc, true);
    assert.ok(cut.answers.length > 0 && cut.answers.length < ENDPOINTS);
    const whole = await env.query(BIG, 'A', { tcp: true });
    assert.equal(whole.flag_tc, false);
    assert.equal(whole.answers?.length, ENDPOINTS);
  });

  it('takes the UDP size from the client OPT record and echoes EDNS0', async () => {
    const r = await env.query(BIG, 'A', { edns: 4096 });
    assert.equal(r.flag_tc, false);
    assert.equal(r.answers?.length, ENDPOINTS);
    const opt = (r.additionals ?? []).find((a) => a.type === 'OPT') as any;
    assert.equal(opt?.udpPayloadSize, 4096);
    const noOpt = await env.query(`kubernetes.default.svc.cluster.local`, 'A');
    assert.equal((noOpt.additionals ?? []).filter((a) => a.type === 'OPT').length, 0);
  });

  it('answers BADVERS to an EDNS version it does not know', async () => {
    const q = dnsPacket.encode({
      type: 'query',
      id: 77,
      questions: [{ type: 'A', name: BIG }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, ednsVersion: 1 } as any],
    });
    const r = dnsPacket.decode(await sendUdp(env.dns.dnsPort, q)) as any;
    const opt = r.additionals.find((a: any) => a.type === 'OPT');
    // BADVERS (16): the upper 8 bits of the rcode are in the OPT record.
    assert.equal(opt.extendedRcode, 1);
    assert.equal(r.flags & 0xf, 0);
  });

  it('answers a malformed message FORMERR with its id, and keeps serving', async () => {
    const truncatedName = Buffer.concat([queryBytes(BIG, 'A').subarray(0, 20)]);
    truncatedName.writeUInt16BE(0xbeef, 0);
    for (const send of [sendUdp, sendTcp]) {
      const r = dnsPacket.decode(await send(env.dns.dnsPort, truncatedName)) as any;
      assert.equal(r.id, 0xbeef);
      assert.equal(r.rcode, 'FORMERR');
      assert.equal(r.type, 'response');
    }
    const twoQuestions = dnsPacket.encode({
      type: 'query',
      id: 9,
      questions: [
        { type: 'A', name: BIG },
        { type: 'A', name: BIG },
      ],
    });
    assert.equal((dnsPacket.decode(await sendUdp(env.dns.dnsPort, twoQuestions)) as any).rcode, 'FORMERR');
    assert.equal((await env.query(BIG, 'A', { tcp: true })).rcode, 'NOERROR');
  });

  it('serves /health and /ready with "OK"', async () => {
    assert.deepEqual(await get(env.dns.healthPort, '/health'), { status: 200, body: 'OK' });
    assert.deepEqual(await get(env.dns.readyPort, '/ready'), { status: 200, body: 'OK' });
  });

  it('counts requests, responses by rcode and their duration under CoreDNS metric names', async () => {
    const scrape = async () => (await get(env.dns.metricsPort, '/metrics')).body;
    const sample = (text: string, prefix: string) => {
      const line = text.split('\n').find((l) => l.startsWith(prefix));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const nx =
      'coredns_dns_responses_total{server="dns://:0",zone=".",view="",rcode="NXDOMAIN",plugin="kubernetes"}';
    const reqs =
      'coredns_dns_requests_total{server="dns://:0",zone=".",view="",proto="udp",family="4",type="A"}';
    const before = await scrape();
    await env.query(`nope.${NS}.svc.cluster.local`, 'A');
    await env.query(`nope.${NS}.svc.cluster.local`, 'A');
    const after = await scrape();
    assert.equal(sample(after, nx) - sample(before, nx), 2);
    assert.ok(sample(after, reqs) - sample(before, reqs) >= 2);
    assert.match(
      after,
      /^coredns_dns_request_duration_seconds_count\{server="dns:\/\/:0",zone=".",view="",type="A"\} \d+/m,
    );
    assert.match(
      after,
      /^coredns_cache_hits_total\{server="dns:\/\/:0",type="success",zones=".",view=""\} 0/m,
    );
    assert.match(after, /^coredns_cache_entries\{/m);
  });
});
