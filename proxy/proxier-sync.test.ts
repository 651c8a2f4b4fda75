// The sync loop's pacing against a real apiserver: nothing applied before the
// caches sync, at most one sync per --min-sync-period (bursts coalesced), and
// the last state of a burst applied. The backend records what it is given
// (the kernel side is covered by backend.test.ts and proxier.test.ts).
import { strict as assert } from 'node:assert';
import { startTestAPIServer, type TestAPIServer } from '../apiserver/server/testing';
import { Client } from '../shared/client';
import { logger } from '../shared/log';
import { MetricsRegistry } from '../shared/metrics/registry';
import type { ProxyBackend } from './backend';
import { proxyMetrics } from './metrics';
import type { RuleSet } from './model';
import { Proxier } from './proxier';

class RecordingBackend implements ProxyBackend {
  readonly mode = 'nftables';
  readonly applied: { at: number; rs: RuleSet }[] = [];
  async apply(rs: RuleSet): Promise<void> {
    this.applied.push({ at: Date.now(), rs });
  }
  async cleanup(): Promise<void> {}
}

const MIN_SYNC_MS = 500;

describe('proxy sync loop', function () {
  this.timeout(60_000);
  let api: TestAPIServer;
  let client: Client;
  let proxier: Proxier | undefined;
  before(async () => {
    api = await startTestAPIServer();
    client = Client.create(api.config, { qps: -1, http2: false });
  });
  after(async () => {
    await proxier?.stop();
    await client?.close();
    await api?.stop();
  });

  it('coalesces a burst of changes into syncs at least --min-sync-period apart, ending with the last state', async () => {
    const backend = new RecordingBackend();
    proxier = new Proxier({
      client,
      backend,
      model: {
        nodeName: 'n',
        nodeIPs: [],
        clusterCIDRs: [],
        serviceCIDRs: [],
        masqueradeAll: false,
        nodePortAddresses: [],
      },
      minSyncPeriodMs: MIN_SYNC_MS,
      syncPeriodMs: 60_000,
      metrics: proxyMetrics(new MetricsRegistry({ currentVersion: '1.36' })),
      log: logger('proxy-test'),
    });
    await proxier.start();
    assert.equal(backend.applied.length, 1, 'one sync once the caches have synced');
    const names = (rs: RuleSet) => rs.servicePorts.map((sp) => sp.service).sort();
    assert.deepEqual(names(backend.applied[0].rs), ['kubernetes']);

    const services = client.resource('services').namespace('default');
    const burst = Array.from({ length: 20 }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
    await Promise.all(
      burst.map((name) =>
        services.create({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name },
          spec: { ports: [{ port: 80 }] },
        }),
      ),
    );
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && names(backend.applied.at(-1)!.rs).length < 21) await proxier.whenIdle();
    await proxier.whenIdle();
    assert.deepEqual(names(backend.applied.at(-1)!.rs), [...burst, 'kubernetes'].sort());
    assert.ok(
      backend.applied.length < 1 + burst.length,
      `${backend.applied.length - 1} syncs for 20 changes`,
    );
    for (let i = 1; i < backend.applied.length; i++) {
      const gap = backend.applied[i].at - backend.applied[i - 1].at;
      assert.ok(gap >= MIN_SYNC_MS - 5, `syncs ${gap} ms apart`);
    }
  });
});
