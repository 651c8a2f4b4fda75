// Persistent storage on a local cluster with containerd, driven with the real
// kubectl: the default local-path class, a claim that names no class gets a
// directory under its node's data dir, one pod writes a file there and a
// second reads it; a two-replica StatefulSet with a claim template becomes
// Ready and keeps its data across a pod deletion; deleting a claim removes
// its PV and its directory. The scheduler's VolumeBinding writes the claims'
// selected-node, for the binder and the provisioner.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, loadKubeconfig } from '../shared/client';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { waitUntil } from '../shared/cluster/process';
import { nodeName } from '../shared/cluster/node-addresses';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable, kubectlOn } from './support/kubectl';

describe('storage on containerd: local-path volumes, claims mounted by the node agent, StatefulSet claims', function () {
  this.timeout(240_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let admin: Client;
  const podCIDR = testPodCIDR();

  const { ok, json, apply } = kubectlOn(() => cluster.kubeconfig);
  const busybox = (script: string, mounts: any[]) => ({
    name: 'c',
    image: 'busybox',
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    volumeMounts: mounts,
  });
  const claimPod = (name: string, claim: string, script: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [busybox(script, [{ name: 'data', mountPath: '/data' }])],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    },
  });
  const phase = (name: string, want: string) =>
    waitUntil(
      async () => ((await json('get', 'pod', name)).status?.phase === want ? true : undefined),
      90_000,
      `pod ${name} ${want}`,
    );
  const absent = (args: string[]) =>
    waitUntil(
      async () => ((await kubectl(cluster.kubeconfig, ['get', ...args])).code !== 0 ? true : undefined),
      60_000,
      `${args.join(' ')} gone`,
    );

  before(async function () {
    const why = runtimeTestsUnavailable() ?? (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the storage e2e tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    cluster = await startCluster({ runtime: 'containerd', podCIDR: () => podCIDR, timeoutMs: 90_000 });
    admin = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  });

  after(async () => {
    await admin?.close();
    await cluster?.cleanup();
  });

  it('gives a claim with no class a local-path volume that one pod writes and a second reads; deleting the claim removes PV and directory', async () => {
    assert.match(
      await ok(['get', 'sc']),
      /^local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/m,
    );
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'shared' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
    });
    assert.equal((await json('get', 'pvc', 'shared')).spec.storageClassName, 'local-path');
    await apply(claimPod('writer', 'shared', 'echo hello from writer > /data/greeting'));
    await phase('writer', 'Succeeded');
    await apply(claimPod('reader', 'shared', 'cat /data/greeting'));
    await phase('reader', 'Succeeded');
    assert.equal((await ok(['logs', 'reader'])).trim(), 'hello from writer');

    const claim = await json('get', 'pvc', 'shared');
    assert.equal(claim.status.phase, 'Bound');
    const pv = await json('get', 'pv', claim.spec.volumeName);
    const dir = join(cluster.dataDir, 'nodes', nodeName(0), 'storage', `${pv.metadata.name}_default_shared`);
    assert.deepEqual(pv.spec.hostPath, { path: dir, type: 'DirectoryOrCreate' });
    assert.equal(readFileSync(join(dir, 'greeting'), 'utf8'), 'hello from writer\n');

    await ok(['delete', 'pod', 'writer', 'reader', '--wait=true']);
    await ok(['delete', 'pvc', 'shared', '--wait=true']);
    await absent(['pv', pv.metadata.name]);
    assert.equal(existsSync(dir), false, 'the directory goes with the PV');
  });

  it('runs a two-replica StatefulSet with a claim template to Ready and keeps its data across a pod deletion', async () => {
    // Each pod records a token in its volume the first time and reports what it finds.
    const script =
      "trap 'exit 0' TERM; if [ -f /data/id ]; then echo found $(cat /data/id); else echo $RANDOM$RANDOM > /data/id; echo wrote $(cat /data/id); fi; while true; do sleep 1; done";
    await apply({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [busybox(script, [{ name: 'data', mountPath: '/data' }])],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '32Mi' } } },
          },
        ],
      },
    });
    await waitUntil(
      async () => ((await json('get', 'statefulset', 'db')).status?.readyReplicas === 2 ? true : undefined),
      120_000,
      'db 2 Ready',
    );
    for (const c of ['data-db-0', 'data-db-1'])
      assert.equal((await json('get', 'pvc', c)).status.phase, 'Bound', `${c} Bound`);
    const wrote = (await ok(['logs', 'db-0'])).match(/^wrote (\d+)$/m)?.[1];
    assert.ok(wrote, 'db-0 wrote its token');
    const uid = (await json('get', 'pod', 'db-0')).metadata.uid;

    await ok(['delete', 'pod', 'db-0', '--wait=true']);
    const again = await waitUntil(
      async () => {
        const p = await json('get', 'pod', 'db-0').catch(() => undefined);
        if (!p || p.metadata.uid === uid || p.status?.phase !== 'Running') return undefined;
        const logs = await kubectl(cluster.kubeconfig, ['logs', 'db-0']);
        return /^found /m.test(logs.stdout) ? logs.stdout : undefined;
      },
      90_000,
      'a new db-0 that found its data',
    );
    assert.match(again, new RegExp(`^found ${wrote}$`, 'm'));
  });
});
