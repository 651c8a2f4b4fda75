// Images offline on a local cluster with real containers (two nodes): `kubectl run
// --image=busybox` with the default pull policy (Always, the image has no tag)
// pulls from the cluster's registry on 127.0.0.1 and runs; an image nobody has
// fails at once with ErrImagePull naming that registry, and nothing is asked
// of docker.io (the cluster runs mirror-only, as every test does). A user's
// images: an archive in <data-dir>/images/ is imported at start, and `tkube
// image load` of a docker-archive and an OCI layout (made with skopeo from the
// offline busybox under other names) brings them to every node, where a
// DaemonSet with imagePullPolicy Never runs, and into the registry, from which
// a pull policy of Always pulls; `tkube image ls` and the Nodes' status.images
// show them on each node. An image pushed with skopeo to the registry on
// 127.0.0.1 (kind's "local registry" recipe) pulls under that name and under a
// mirrored docker.io name. A node's containerd SIGKILLed is restarted by the
// launcher on the same socket: the containers that ran keep running (same IDs,
// same processes, no restart counted), the node agent reconnects and a new pod
// starts. (wget from one pod to another's httpd by pod IP is
// service-proxy-containerd.test.ts' "reaches a pod on the other node".)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CriClient } from '../shared/cri/client';
import { busyboxAs, runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { bridgeExists } from '../shared/cluster/containerd';
import { clusterPaths } from '../shared/cluster/data-dir';
import { registryMissing, SKOPEO_BIN } from '../shared/cluster/registry';
import { waitUntil } from '../shared/cluster/process';
import { runTkube, startCluster } from './support/cluster';
import { kubectlAvailable, kubectlOn } from './support/kubectl';
import { freePort, tempDir } from './support/processes';

describe("images on containerd: the cluster's registry as every node's mirror", function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  const podCIDRs = [testPodCIDR(), testPodCIDR()];
  let dataDir: string;
  let registryPort: number;

  const { ok } = kubectlOn(() => cluster.kubeconfig);
  const pod = async (name: string) => JSON.parse(await ok(['get', 'pod', name, '-o', 'json']));
  const running = (name: string) =>
    waitUntil(
      async () => {
        const p = await pod(name);
        return p.status?.phase === 'Running' ? p : undefined;
      },
      60_000,
      `pod ${name} Running`,
    );
  /** A busybox pod that sleeps, on node i. */
  const sleeper = (name: string, i: number, image = 'busybox', imagePullPolicy = 'IfNotPresent') =>
    ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          nodeName: cluster.nodeName(i),
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image, imagePullPolicy, command: ['sleep', '3600'] }],
        },
      }),
    );

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
    dataDir = tempDir('images');
    // The auto-import folder, filled before the start.
    mkdirSync(clusterPaths(dataDir).images, { recursive: true });
    busyboxAs(`docker-archive:${join(clusterPaths(dataDir).images, 'auto.tar')}:tkube-e2e/auto:v1`);
    registryPort = await freePort();
    cluster = await startCluster({
      dataDir,
      registryPort,
      nodes: 2,
      runtime: 'containerd',
      podCIDR: (i) => podCIDRs[i],
      timeoutMs: 90_000,
    });
  });

  after(async () => {
    const ctds = cluster?.containerds.map((c) => c.dataDir) ?? [];
    await cluster?.cleanup();
    for (const d of ctds) assert.ok(!bridgeExists(d), `the bridge of ${d} is gone`);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
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

  it('imports <data-dir>/images/ at start and `tkube image load`s archives into every node and the registry', async () => {
    const nodes = [cluster.nodeName(0), cluster.nodeName(1)];
    const work = tempDir('image-load');
    try {
      busyboxAs(`docker-archive:${join(work, 'loaded.tar')}:tkube-e2e/loaded:v1`);
      busyboxAs(`oci:${join(work, 'layout')}:tkube-e2e/layout:v1`);
      const load = await runTkube([
        'image',
        'load',
        '--data-dir',
        dataDir,
        join(work, 'loaded.tar'),
        join(work, 'layout'),
      ]);
      assert.equal(load.code, 0, load.stderr);
      assert.match(
        load.stdout,
        /Loaded docker\.io\/tkube-e2e\/loaded:v1 on .*; registry: 127\.0\.0\.1:\d+\/tkube-e2e\/loaded:v1/,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    const ls = await runTkube(['image', 'ls', '--data-dir', dataDir]);
    assert.equal(ls.code, 0, ls.stderr);
    for (const node of nodes)
      for (const image of ['auto', 'loaded', 'layout'])
        assert.match(
          ls.stdout,
          new RegExp(
            // DIGEST (a repo digest: only once pulled from a registry, as crictl shows it), IMAGE ID, SIZE.
            `^${node}\\s+docker\\.io/tkube-e2e/${image}\\s+v1\\s+([0-9a-f]{13}|<none>)\\s+[0-9a-f]{13}\\s+[\\d.]+[kMG]?B$`,
            'm',
          ),
          `${image} on ${node} in:\n${ls.stdout}`,
        );

    // Present on every node, so pull policy Never runs it on each.
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'loaded' },
        spec: {
          selector: { matchLabels: { app: 'loaded' } },
          template: {
            metadata: { labels: { app: 'loaded' } },
            spec: {
              terminationGracePeriodSeconds: 0,
              containers: [
                {
                  name: 'c',
                  image: 'tkube-e2e/loaded:v1',
                  imagePullPolicy: 'Never',
                  command: ['sleep', '3600'],
                },
              ],
            },
          },
        },
      }),
    );
    await waitUntil(
      async () => {
        const pods = JSON.parse(await ok(['get', 'pods', '-l', 'app=loaded', '-o', 'json'])).items;
        const running = pods
          .filter((p: any) => p.status?.phase === 'Running')
          .map((p: any) => p.spec.nodeName);
        return nodes.every((n) => running.includes(n));
      },
      60_000,
      'the DaemonSet Running on every node',
    );

    // In the registry too: policy Always pulls it from there.
    await ok([
      'run',
      'layout',
      '--image=tkube-e2e/layout:v1',
      '--image-pull-policy=Always',
      '--restart=Never',
      '--',
      'sleep',
      '3600',
    ]);
    await waitUntil(
      async () => (await pod('layout')).status?.phase === 'Running',
      60_000,
      'pod layout Running',
    );
    const events = JSON.parse(
      await ok(['get', 'events', '--field-selector', 'involvedObject.name=layout', '-o', 'json']),
    ).items;
    assert.ok(
      events.some((e: any) => /^Successfully pulled image "tkube-e2e\/layout:v1"/.test(e.message)),
      'pulled from the registry',
    );

    // The Nodes' status lists them (the agents re-read the runtime's images).
    await waitUntil(
      async () => {
        const items = JSON.parse(await ok(['get', 'nodes', '-o', 'json'])).items;
        return items.every((n: any) => {
          const names = (n.status.images ?? []).flatMap((i: any) => i.names);
          return ['auto', 'loaded', 'layout'].every((i) => names.includes(`docker.io/tkube-e2e/${i}:v1`));
        });
      },
      60_000,
      "the images in both Nodes' status",
    );
  });

  it('pulls an image pushed with skopeo to the registry on 127.0.0.1, under its name and a mirrored docker.io name', async () => {
    const work = tempDir('image-push');
    try {
      // kind's "local registry" recipe: an archive of a user's image, pushed over plain HTTP.
      const archive = join(work, 'app.tar');
      busyboxAs(`oci-archive:${archive}:me/app:dev`);
      execFileSync(
        SKOPEO_BIN,
        [
          'copy',
          '--quiet',
          '--insecure-policy',
          '--dest-tls-verify=false',
          `oci-archive:${archive}`,
          `docker://127.0.0.1:${registryPort}/me/app:dev`,
        ],
        { stdio: 'pipe' },
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const pushed = `127.0.0.1:${registryPort}/me/app:dev`;
    for (const [name, image] of [
      ['pushed', pushed],
      ['pushed-mirrored', 'docker.io/me/app:dev'],
    ]) {
      await sleeper(name, 1, image, 'Always');
      const p = await running(name);
      assert.equal(p.status.containerStatuses[0].image, image);
      const events = JSON.parse(
        await ok(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json']),
      ).items;
      assert.ok(
        events.some((e: any) => e.message.startsWith(`Successfully pulled image "${image}"`)),
        `${image} pulled, not taken as present`,
      );
    }
  });

  it("restarts a node's SIGKILLed containerd on its socket, keeps its containers running, and starts new pods", async () => {
    const ctd = cluster.containerds[0];
    await sleeper('survivor', 0);
    const before = (await running('survivor')).status.containerStatuses[0];
    const id = before.containerID.replace(/^containerd:\/\//, '');
    /** The container's process as the runtime reports it (ContainerStatus verbose info). */
    const containerPid = async (cri: CriClient) => {
      const s = await cri.call('ContainerStatus', { containerId: id, verbose: true });
      assert.equal(s.status.state, 'CONTAINER_RUNNING');
      return Number(JSON.parse(s.info.info).pid);
    };
    let cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 10_000 });
    let pid: number;
    try {
      pid = await containerPid(cri);
    } finally {
      cri.close();
    }
    assert.ok(pid > 0);

    const oldPid = ctd.pid;
    process.kill(oldPid, 'SIGKILL');
    // The launcher starts it again (a new PID) on the same socket.
    cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 5_000 });
    try {
      await waitUntil(
        async () =>
          ctd.pid !== oldPid &&
          (await cri.call('Version').then(
            () => true,
            () => false,
          )),
        60_000,
        'containerd restarted and answering on its socket',
      );
      // The shim kept the container: the same ID, running, with the same process.
      assert.equal(await containerPid(cri), pid);
      assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /^sleep\0/);
    } finally {
      cri.close();
    }

    // The node agent talks to the new containerd: a new pod on that node runs.
    await sleeper('after-restart', 0);
    await running('after-restart');
    const after = (await pod('survivor')).status.containerStatuses[0];
    assert.equal(after.containerID, before.containerID);
    assert.equal(after.restartCount, before.restartCount);
    assert.equal(after.state.running?.startedAt, before.state.running.startedAt);
  });
});
