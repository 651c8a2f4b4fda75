// The dns executable as its own process against an apiserver process: its
// flags, /ready once synced, answers over UDP and TCP, and a clean SIGTERM.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as dnsPacket from 'dns-packet';
import {
  DIST,
  freePort,
  startAPIServerProcess,
  startProcess,
  type APIServerProc,
  type Proc,
} from './support/processes';
import { waitUntil } from '../shared/cluster/process';
import { queryBytes, sendTcp, sendUdp } from '../dns/testing';

describe('dns executable', function () {
  this.timeout(90_000);
  let api: APIServerProc;
  let dns: Proc | undefined;
  const ports = { dns: 0, health: 0, ready: 0, metrics: 0 };

  before(async () => {
    api = await startAPIServerProcess();
    for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
    dns = startProcess(
      'dns',
      [
        '--kubeconfig',
        api.kubeconfig,
        '--dns-bind-address',
        '127.0.0.1',
        '--dns-port',
        String(ports.dns),
        '--health-port',
        String(ports.health),
        '--ready-port',
        String(ports.ready),
        '--metrics-bind-address',
        `127.0.0.1:${ports.metrics}`,
        '--upstream',
        'none',
        '-v=2',
      ],
      api.dir,
    );
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${ports.ready}/ready`)).status === 200,
      30_000,
      '/ready',
      dns.exited,
    );
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
