// Images offline on a local cluster with real containers: `kubectl run
// --image=busybox` with the default pull policy (Always, the image has no tag)
// pulls from the cluster's registry on 127.0.0.1 and runs; an image nobody has
// fails at once with ErrImagePull naming that registry, and nothing is asked
// of docker.io (the cluster runs mirror-only, as every test does).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { registryMissing } from '../shared/cluster/registry';
import { waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';

describe("images on containerd: the cluster's registry as every node's mirror", function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  const podCIDR = testPodCIDR();

  const ok = async (args: string[]) => {
    const r = await kubectl(cluster.kubeconfig, args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const pod = async (name: string) => JSON.parse(await ok(['get', 'pod', name, '-o', 'json']));

  before(async function () {
    const why =
      runtimeTestsUnavailable() ??
      registryMissing() ??
      (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the image e2e tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    cluster = await startCluster({ runtime: 'containerd', podCIDR: () => podCIDR, timeoutMs: 90_000 });
  });

  after(async () => {
    await cluster?.cleanup();
  });

  it('runs `kubectl run --image=busybox` with the default pull policy (Always) from the local registry', async () => {
    await ok(['run', 'bb', '--image=busybox', '--restart=Never', '--', 'sh', '-c', 'echo hello; sleep 3600']);
    const p = await waitUntil(
      async () => {
        const x = await pod('bb');
        return x.status?.phase === 'Running' ? x : undefined;
      },
      60_000,
      'pod bb Running',
    );
    assert.equal(p.spec.containers[0].imagePullPolicy, 'Always');
    assert.match(p.status.containerStatuses[0].imageID, /^docker\.io\/library\/busybox@sha256:/);
    const events = await ok(['get', 'events', '--field-selector', 'involvedObject.name=bb', '-o', 'json']);
    assert.ok(
      JSON.parse(events).items.some((e: any) => e.reason === 'Pulled'),
      'pulled (through the mirror), not taken as present',
    );
  });

  it('fails a pod whose image no registry here has with ErrImagePull naming the mirror, at once', async () => {
    await ok(['run', 'nosuch', '--image=nosuch/image:1', '--restart=Never']);
    // The ErrImagePull message, as its event carries it (the waiting reason turns into ImagePullBackOff soon).
    const started = Date.now();
    const failed = await waitUntil(
      async () => {
        const events = await ok([
          'get',
          'events',
          '--field-selector',
          'involvedObject.name=nosuch',
          '-o',
          'json',
        ]);
        const items = JSON.parse(events).items;
        return items.find((e: any) => /^Failed to pull image/.test(e.message));
      },
      30_000,
      'the Failed event',
    );
    assert.match(
      failed.message,
      /not found \(pulled through the registry mirror http:\/\/127\.0\.0\.1:\d+\)/,
    );
    assert.ok(Date.now() - started < 20_000, 'no waiting on an upstream');
    for (const c of cluster.containerds)
      assert.doesNotMatch(readFileSync(c.logFile, 'utf8'), /registry-1\.docker\.io|index\.docker\.io/);
  });
});
