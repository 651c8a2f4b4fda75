// The controller manager under load, as processes: one ReplicaSet of 1,000
// pods (no nodes, so the scheduler also reports every pod unschedulable)
// while a watch on the kube-controller-manager Lease checks that the leader
// keeps renewing it — each renewal well inside the renew deadline — and
// never loses it; then 10 simulated nodes join and every pod is bound and
// Ready under the same leader. Controllers' clients have their own rate
// limiters; the lease's client is its own.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Client, loadKubeconfig, type KubeObject } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import {
  freePort,
  startAPIServerProcess,
  startProcess,
  tempDir,
  type APIServerProc,
  type Proc,
} from './support/processes';

const REPLICAS = 1000;
/** kube-controller-manager's defaults. */
const LEASE = { duration: 15_000, renew: 10_000, retry: 2_000 };

describe('controller-manager under load (processes)', function () {
  this.timeout(600_000);
  let api: APIServerProc;
  let kcm: Proc;
  let nodes: Proc | undefined;
  let leader = '';
  let port: number;
  let dir: string;
  let client: Client;
  let admin: Agent;

  before(async () => {
    api = await startAPIServerProcess();
    dir = tempDir('kcm-load');
    const cfg = loadKubeconfig(api.kubeconfig);
    client = Client.create(cfg, { qps: -1, http2: false });
    admin = new Agent({ connect: { rejectUnauthorized: false, cert: cfg.certPem, key: cfg.keyPem } });
    port = await freePort();
    kcm = startProcess(
      'controller-manager',
      [
        '--kubeconfig',
        api.kubeconfig,
        '--secure-port',
        String(port),
        '--bind-address',
        '127.0.0.1',
        '--cert-dir',
        join(dir, 'kcm'),
        '--client-ca-file',
        join(api.dir, 'certs', 'ca.crt'),
        `--leader-elect-lease-duration=${LEASE.duration}ms`,
        `--leader-elect-renew-deadline=${LEASE.renew}ms`,
        `--leader-elect-retry-period=${LEASE.retry}ms`,
      ],
      dir,
    );
  });

  after(async () => {
    await nodes?.stop('SIGKILL');
    await kcm?.stop('SIGKILL');
    await admin?.close();
    await client?.close();
    await api?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const leases = () => client.resource('leases.coordination.k8s.io').namespace('kube-system');

  it(`keeps renewing its lease while one ReplicaSet creates ${REPLICAS} pods`, async () => {
    const first = await waitUntil(
      async () => {
        const l = await leases().get('kube-controller-manager');
        return l.spec?.holderIdentity ? l : undefined;
      },
      60_000,
      'a leader',
    );
    const holder: string = first.spec.holderIdentity;
    leader = holder;
    const renewals: number[] = [Date.parse(first.spec.renewTime)];
    const holders = new Set<string>([holder]);
    const watch = await leases().watch({
      fieldSelector: 'metadata.name=kube-controller-manager',
      resourceVersion: first.metadata!.resourceVersion,
    });
    const watching = (async () => {
      for await (const ev of watch) {
        const l = ev.object as KubeObject & { spec?: any };
        if (ev.type !== 'MODIFIED' && ev.type !== 'ADDED') continue;
        holders.add(l.spec?.holderIdentity ?? '');
        const t = Date.parse(l.spec?.renewTime ?? '');
        if (t > renewals[renewals.length - 1]) renewals.push(t);
      }
    })();

    const ns = 'load';
    await client.resource('namespaces').create({ metadata: { name: ns } });
    await client
      .resource('replicasets.apps')
      .namespace(ns)
      .create({
        metadata: { name: 'big' },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: 'big' } },
          template: {
            metadata: { labels: { app: 'big' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      });
    await waitUntil(
      async () => {
        const rs = await client.resource('replicasets.apps').namespace(ns).get('big');
        return rs.status?.replicas === REPLICAS;
      },
      480_000,
      `${REPLICAS} pods`,
      kcm.exited,
    );
    const pods = await client.resource('pods').namespace(ns).list();
    assert.equal(pods.items.length, REPLICAS);
    // One more renewal after the work, then stop watching.
    const last = renewals[renewals.length - 1];
    await waitUntil(async () => renewals[renewals.length - 1] > last, 30_000, 'a renewal after the load');
    watch.stop();
    await watching.catch(() => {});

    assert.deepEqual([...holders], [holder], 'the lease never changed hands');
    assert.equal(kcm.child.exitCode, null, 'the controller manager is still running');
    const gaps = renewals.slice(1).map((t, i) => t - renewals[i]);
    const worst = Math.max(...gaps);
    // Renewals come every retry period; one that comes later than the renew deadline is a lost lease.
    assert.ok(worst < LEASE.renew, `renewTime gaps ${gaps.join(',')} ms: one reached the renew deadline`);
    assert.ok(renewals.length > 2, `renewals seen: ${renewals.length}`);

    // The loop's lag is measured and served.
    const r = await request(`https://127.0.0.1:${port}/metrics`, { dispatcher: admin });
    const body = await r.body.text();
    assert.match(body, /^nodejs_eventloop_lag_p99_seconds \d/m);
    assert.match(
      body,
      /^scheduler_schedule_attempts_total\{result="unschedulable",profile="default-scheduler"\} \d+/m,
    );
  });

  it('binds them to 10 simulated nodes, all Ready, under the same leader', async () => {
    nodes = startProcess(
      'nodeagent',
      [
        '--kubeconfig',
        api.kubeconfig,
        '--simulated-nodes',
        '10',
        '--hostname-override',
        'load-node',
        '--node-ip',
        '127.0.0.1',
        '--address',
        '127.0.0.1',
        '--read-only-port',
        '0',
        '--healthz-port',
        '0',
        '--root-dir',
        join(dir, 'nodes'),
      ],
      dir,
    );
    await waitUntil(
      async () => {
        const rs = await client.resource('replicasets.apps').namespace('load').get('big');
        return rs.status?.readyReplicas === REPLICAS;
      },
      480_000,
      `${REPLICAS} ready replicas`,
      kcm.exited,
    );
    const lease = await leases().get('kube-controller-manager');
    assert.equal(lease.spec.holderIdentity, leader);
    assert.equal(kcm.child.exitCode, null, 'the controller manager is still running');
  });
});
