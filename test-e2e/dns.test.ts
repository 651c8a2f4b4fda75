// The dns executable as its own process against an apiserver process: its
// flags, /ready once synced, answers over UDP and TCP, and a clean SIGTERM.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as dnsPacket from 'dns-packet';
import {
  DIST,
  startAPIServerProcess,
  startDnsProcess,
  type APIServerProc,
  type DnsProc,
} from './support/processes';
import { queryBytes, sendTcp, sendUdp } from '../dns/testing';

describe('dns executable', function () {
  this.timeout(90_000);
  let api: APIServerProc;
  let dns: DnsProc | undefined;
  let ports: DnsProc['ports'];

  before(async () => {
    api = await startAPIServerProcess();
    dns = await startDnsProcess(api.kubeconfig, api.dir, ['-v=2']);
    ports = dns.ports;
  });

  after(async () => {
    await dns?.stop();
    await api?.cleanup();
  });

  it('refuses a bad flag value with an error and exit code 1', () => {
    const r = spawnSync(process.execPath, [join(DIST, 'cmd/dns.js'), '--pods', 'sometimes'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^Error: .*pods.*disabled, insecure or verified/m);
  });

  it('answers the kubernetes Service over UDP and TCP, and serves /health and /metrics', async () => {
    for (const send of [sendUdp, sendTcp]) {
      const r = dnsPacket.decode(
        await send(ports.dns, queryBytes('kubernetes.default.svc.cluster.local', 'A')),
      ) as any;
      assert.equal(r.rcode, 'NOERROR');
      assert.equal(r.answers.length, 1);
    }
    assert.equal(await (await fetch(`http://127.0.0.1:${ports.health}/health`)).text(), 'OK');
    assert.match(
      await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text(),
      /^coredns_dns_requests_total\{/m,
    );
  });

  it('exits 0 on SIGTERM', async () => {
    const code = await dns!.stop('SIGTERM');
    dns = undefined;
    assert.equal(code, 0);
  });
});
