// The controller manager's own parts: --controllers selection, the flag
// table's defaults, metered work queues, and the secure port's health,
// metrics and authorization.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Command } from 'commander';
import { addFlags, readFlags } from '../../shared/options/flags';
import { defaultFlagValues } from '../../shared/options/defaults';
import { MetricsRegistry } from '../../shared/metrics/registry';
import { setSilent } from '../../shared/log';
import { createCA, createClientCert } from '../../shared/pki/certs';
import { writeFileSync } from 'node:fs';
import type { ControllerDescriptor } from '../controller';
import { ControllerSelection, allControllers } from './controllers';
import { controllerManagerFlags } from './options';
import { HealthChecks, SecureServer } from './server';
import { newQueue, setQueueMetricsProvider } from './workqueue';

const d = (name: string, extra: Partial<ControllerDescriptor> = {}): ControllerDescriptor => ({
  name,
  start: () => {},
  ...extra,
});

describe('controller-manager: app', function () {
  this.timeout(30_000);
  before(() => setSilent(process.env.TKUBE_TEST_LOGS !== '1'));

  describe('--controllers', () => {
    const sel = new ControllerSelection([
      d('namespace', { aliases: ['namespace-controller'] }),
      d('garbagecollector'),
      d('bootstrapsigner', { disabledByDefault: true }),
      d('tokencleaner', { disabledByDefault: true }),
    ]);
    const pick = (s: string[]) => sel.select(s).map((x) => x.name);

    it("'*' starts the on-by-default controllers only", () => {
      assert.deepEqual(pick(['*']), ['namespace', 'garbagecollector']);
    });
    it("'name' enables, '-name' disables, aliases count, the first mention wins", () => {
      assert.deepEqual(pick(['*', 'tokencleaner']), ['namespace', 'garbagecollector', 'tokencleaner']);
      assert.deepEqual(pick(['*', '-namespace-controller']), ['garbagecollector']);
      assert.deepEqual(pick(['namespace']), ['namespace']);
      assert.deepEqual(pick(['-namespace', 'namespace', '*']), ['garbagecollector']);
      assert.deepEqual(pick([]), []);
    });
    it('rejects unknown names like kube-controller-manager', () => {
      assert.deepEqual(sel.validate(['*', 'nope', '-alsonope', 'namespace-controller']), [
        '"nope" is not in the list of known controllers',
        '"alsonope" is not in the list of known controllers',
      ]);
    });
    it('knows the volume controllers by their kube-controller-manager names and aliases', () => {
      const all = new ControllerSelection(allControllers());
      for (const n of ['persistentvolume-binder', 'pv-protection', 'pvc-protection', 'ephemeral-volume'])
        assert.ok(all.names().includes(n), n);
      assert.deepEqual(
        all.validate([
          'persistentvolume-binder-controller',
          'persistentvolume-protection-controller',
          'persistentvolumeclaim-protection-controller',
          'ephemeral-volume-controller',
        ]),
        [],
      );
      const on = all.select(['*', '-pvc-protection']).map((d) => d.name);
      assert.ok(on.includes('persistentvolume-binder') && !on.includes('pvc-protection'));
    });
    it('knows every core controller, bootstrapsigner and tokencleaner off by default', () => {
      const all = new ControllerSelection(allControllers());
      for (const n of [
        'namespace',
        'garbagecollector',
        'nodelifecycle',
        'serviceaccount',
        'root-ca-cert-publisher',
        'podgc',
        'ttl-after-finished',
      ])
        assert.ok(all.names().includes(n), n);
      assert.deepEqual(all.disabledByDefault().sort(), ['bootstrapsigner', 'tokencleaner']);
      assert.deepEqual(
        all.validate([
          'garbage-collector-controller',
          'node-lifecycle-controller',
          'taint-eviction-controller',
        ]),
        [],
      );
    });
  });

  describe('flags', () => {
    it("has kube-controller-manager's defaults", () => {
      const v = defaultFlagValues(controllerManagerFlags);
      const expect: Record<string, unknown> = {
        securePort: 10257,
        bindAddress: '0.0.0.0',
        leaderElect: true,
        leaderElectLeaseDuration: 15_000,
        leaderElectRenewDeadline: 10_000,
        leaderElectRetryPeriod: 2_000,
        leaderElectResourceLock: 'leases',
        leaderElectResourceName: 'kube-controller-manager',
        leaderElectResourceNamespace: 'kube-system',
        controllers: ['*'],
        concurrentDeploymentSyncs: 5,
        concurrentGcSyncs: 20,
        concurrentNamespaceSyncs: 10,
        concurrentServiceSyncs: 1,
        concurrentTtlAfterFinishedSyncs: 5,
        kubeApiQps: 20,
        kubeApiBurst: 30,
        schedulerKubeApiQps: 50,
        schedulerKubeApiBurst: 100,
        kubeApiContentType: 'application/vnd.kubernetes.protobuf',
        nodeMonitorGracePeriod: 40_000,
        nodeMonitorPeriod: 5_000,
        nodeStartupGracePeriod: 60_000,
        podEvictionTimeout: 300_000,
        nodeEvictionRate: 0.1,
        secondaryNodeEvictionRate: 0.01,
        largeClusterSizeThreshold: 50,
        unhealthyZoneThreshold: 0.55,
        terminatedPodGcThreshold: 12500,
        namespaceSyncPeriod: 300_000,
        resourceQuotaSyncPeriod: 300_000,
        pvclaimbinderSyncPeriod: 15_000,
        attachDetachReconcileSyncPeriod: 60_000,
        horizontalPodAutoscalerSyncPeriod: 15_000,
        horizontalPodAutoscalerDownscaleStabilization: 300_000,
        horizontalPodAutoscalerCpuInitializationPeriod: 300_000,
        horizontalPodAutoscalerInitialReadinessDelay: 30_000,
        horizontalPodAutoscalerTolerance: 0.1,
        maxEndpointsPerSlice: 100,
        mirroringMaxEndpointsPerSubset: 1000,
        clusterName: 'kubernetes',
        clusterSigningDuration: 8760 * 3600_000,
        minResyncPeriod: 12 * 3600_000,
        routeReconciliationPeriod: 10_000,
        configureCloudRoutes: true,
        enableDynamicProvisioning: true,
        enableGarbageCollector: true,
        enableTaintManager: true,
        cidrAllocatorType: 'RangeAllocator',
        pvRecyclerMinimumTimeoutHostpath: 60,
        pvRecyclerMinimumTimeoutNfs: 300,
        pvRecyclerIncrementTimeoutNfs: 30,
        authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
        volumeHostAllowLocalLoopback: true,
      };
      for (const [k, want] of Object.entries(expect)) assert.deepEqual(v[k], want, k);
    });

    it('parses durations, lists and the neutral aliases', () => {
      const cmd = addFlags(new Command('kcm').exitOverride(), controllerManagerFlags);
      cmd.parse(
        [
          '--node-monitor-grace-period=2s',
          '--controllers=*,-podgc',
          '--controllers',
          'tokencleaner',
          '--cluster-api-qps=7',
          '--leader-elect=false',
          '--concurrent-gc-syncs=3',
        ],
        { from: 'user' },
      );
      const { values } = readFlags(cmd, controllerManagerFlags);
      assert.equal(values.nodeMonitorGracePeriod, 2000);
      assert.deepEqual(values.controllers, ['*', '-podgc', 'tokencleaner']);
      assert.equal(values.kubeApiQps, 7);
      assert.equal(values.leaderElect, false);
      assert.equal(values.concurrentGcSyncs, 3);
    });
  });

  describe('work queue metrics', () => {
    it("reports client-go's workqueue series by queue name", async () => {
      const reg = new MetricsRegistry({ currentVersion: '1.36' });
      setQueueMetricsProvider(reg);
      const q = newQueue<string>('test_queue');
      q.add('a');
      q.add('a');
      q.add('b');
      let text = reg.expose();
      assert.match(text, /workqueue_adds_total\{name="test_queue"\} 2/);
      assert.match(text, /workqueue_depth\{name="test_queue"\} 2/);
      const r = await q.get();
      assert.equal(r.item, 'a');
      text = reg.expose();
      assert.match(text, /workqueue_depth\{name="test_queue"\} 1/);
      assert.match(text, /workqueue_queue_duration_seconds_count\{name="test_queue"\} 1/);
      assert.match(text, /workqueue_longest_running_processor_seconds\{name="test_queue"\} \d/);
      q.done('a');
      q.addRateLimited('c');
      text = reg.expose();
      assert.match(text, /workqueue_work_duration_seconds_count\{name="test_queue"\} 1/);
      assert.match(text, /workqueue_retries_total\{name="test_queue"\} 1/);
      assert.match(text, /# HELP workqueue_adds_total \[ALPHA\] Total number of adds handled by workqueue/);
      q.shutDown();
    });
  });

  describe('secure port', () => {
    let dir: string;
    let server: SecureServer;
    let admin: Agent;
    let anon: Agent;
    const reg = new MetricsRegistry({ currentVersion: '1.36' });
    reg
      .gauge({ name: 'leader_election_master_status', help: 'x', labels: ['name'] })
      .set({ name: 'kube-controller-manager' }, 1);
    let healthy = true;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tkube-kcm-'));
      const ca = await createCA('test-ca');
      writeFileSync(join(dir, 'ca.crt'), ca.certPem);
      const masters = await createClientCert(ca, { commonName: 'admin', organizations: ['system:masters'] });
      const nobody = await createClientCert(ca, { commonName: 'nobody' });
      const health = ['/healthz', '/livez', '/readyz'].map((p) =>
        new HealthChecks(p)
          .add('ping', () => {})
          .add('leaderElection', () => {
            if (!healthy) throw new Error('lease expired');
          }),
      );
      server = new SecureServer({
        bindAddress: '127.0.0.1',
        port: 0,
        certDir: join(dir, 'certs'),
        clientCaFile: join(dir, 'ca.crt'),
        alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
        health,
        metrics: reg,
      });
      await server.start();
      admin = new Agent({
        connect: { rejectUnauthorized: false, cert: masters.certPem, key: masters.keyPem },
      });
      anon = new Agent({ connect: { rejectUnauthorized: false, cert: nobody.certPem, key: nobody.keyPem } });
    });

    after(async () => {
      await admin?.close();
      await anon?.close();
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const get = async (agent: Agent, path: string) => {
      const r = await request(`https://127.0.0.1:${server.port}${path}`, { dispatcher: agent });
      return { status: r.statusCode, body: await r.body.text() };
    };

    it('serves /healthz, /livez and /readyz to anyone, with the leaderElection check', async () => {
      const plain = new Agent({ connect: { rejectUnauthorized: false } });
      try {
        for (const p of ['/healthz', '/livez', '/readyz'])
          assert.deepEqual(await get(plain, p), { status: 200, body: 'ok' });
        const verbose = await get(plain, '/healthz?verbose');
        assert.equal(verbose.body, '[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n');
        // Always-allowed paths match exactly, as kube's path authorizer does ("/healthz/*" would be a prefix).
        assert.equal((await get(plain, '/healthz/leaderElection')).status, 403);
        assert.deepEqual(await get(admin, '/healthz/leaderElection'), { status: 200, body: 'ok' });
        healthy = false;
        const failing = await get(plain, '/healthz');
        assert.equal(failing.status, 500);
        assert.equal(
          failing.body,
          '[+]ping ok\n[-]leaderElection failed: reason withheld\nhealthz check failed\n',
        );
        healthy = true;
      } finally {
        await plain.close();
      }
    });

    it('serves /metrics to system:masters and forbids everybody else', async () => {
      const ok = await get(admin, '/metrics');
      assert.equal(ok.status, 200);
      assert.match(ok.body, /leader_election_master_status\{name="kube-controller-manager"\} 1/);
      const denied = await get(anon, '/metrics');
      assert.equal(denied.status, 403);
      assert.equal(JSON.parse(denied.body).message, 'forbidden: User "nobody" cannot get path "/metrics"');
      assert.equal((await get(admin, '/nope')).status, 404);
    });
  });
});
