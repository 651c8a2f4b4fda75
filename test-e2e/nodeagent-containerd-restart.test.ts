// A node agent on containerd killed with SIGKILL and started again: it finds
// its sandboxes and containers by their CRI labels and adopts them — the same
// container IDs, no duplicate, restart counts and statuses right — and a pod
// deleted while it was down is removed from the runtime when it comes back.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CriClient } from '../shared/cri/client';
import { runtimeTestsUnavailable, startTestContainerd, type TestContainerd } from '../nodeagent/cri/testing';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import type { KubeObject } from '../shared/client/types';
import { sleeperPod } from './support/cluster';
import { unmountUnder } from '../shared/cluster/containerd';
import { waitUntil } from '../shared/cluster/process';
import {
  freePort,
  startAPIServerProcess,
  startProcess,
  tempDir,
  type APIServerProc,
  type Proc,
} from './support/processes';

describe('nodeagent on containerd: restart and adoption', function () {
  this.timeout(180_000);
  let srv: APIServerProc;
  let ctd: TestContainerd;
  let client: Client;
  let cri: CriClient;
  let dir: string;
  let agent: Proc | undefined;
  const node = `cri-node-${process.pid}`;
  const pods = () => client.resource('pods').namespace('default');

  async function startAgent(): Promise<Proc> {
    return startProcess(
      'nodeagent',
      [
        '--kubeconfig',
        srv.kubeconfig,
        '--hostname-override',
        node,
        '--node-ip',
        '127.0.0.1',
        '--address',
        '127.0.0.1',
        '--port',
        String(await freePort()),
        '--read-only-port',
        '0',
        '--healthz-port',
        '0',
        '--root-dir',
        join(dir, node),
        '--pod-cidr',
        ctd.podCIDR,
        '--runtime',
        'remote',
        '--container-runtime-endpoint',
        ctd.endpoint,
        '--cgroup-root',
        `/tkube-e2e-${process.pid}`,
        '--node-status-update-frequency',
        '1s',
      ],
      dir,
    );
  }

  const podSpec = (name: string, restartPolicy = 'Always') =>
    sleeperPod(name, { spec: { nodeName: node, restartPolicy } });

  async function running(name: string): Promise<KubeObject | undefined> {
    const p = await pods().get(name);
    return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
  }

  const containersOf = async (uid: string) =>
    (await cri.call('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } }))
      .containers;

  before(async function () {
    const why = runtimeTestsUnavailable();
    if (why) {
      console.warn(`skipping the containerd restart tests: ${why}`);
      this.skip();
    }
    dir = tempDir('cri-restart');
    ctd = await startTestContainerd();
    cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 10_000 });
    srv = await startAPIServerProcess({ args: ['--kubelet-preferred-address-types', 'InternalIP,Hostname'] });
    client = Client.create(loadKubeconfig(srv.kubeconfig), {
      qps: -1,
      contentType: 'application/json',
      http2: false,
    });
    await client
      .resource('serviceaccounts')
      .namespace('default')
      .create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })
      .catch(() => {});
    // And the root CA ConfigMap the pods' kube-api-access volume projects (the root-ca publisher's).
    await client
      .resource('configmaps')
      .namespace('default')
      .create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kube-root-ca.crt' },
        data: { 'ca.crt': readFileSync(join(srv.dir, 'certs', 'ca.crt'), 'utf8') },
      });
    agent = await startAgent();
  });

  after(async () => {
    await agent?.stop('SIGTERM', 10_000);
    await client?.close();
    cri?.close();
    await srv?.cleanup();
    await ctd?.cleanup();
    if (dir) {
      unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adopts running containers after SIGKILL: same IDs, no duplicates, and removes a pod deleted meanwhile', async () => {
    await pods().create(podSpec('keep'));
    await pods().create(podSpec('gone'));
    const before = await waitUntil(() => running('keep'), 60_000, 'pod keep Running');
    const gone = await waitUntil(() => running('gone'), 60_000, 'pod gone Running');
    const id = before.status.containerStatuses[0].containerID;
    const ip = before.status.podIP;

    await agent!.stop('SIGKILL');
    // While the agent is down: the pod "gone" is force-deleted in the API (its containers keep running).
    await pods().delete('gone', { gracePeriodSeconds: 0 });
    assert.equal((await containersOf(gone.metadata.uid!)).length, 1, 'containers outlive the agent');

    agent = await startAgent();
    await waitUntil(
      async () => (await containersOf(gone.metadata.uid!)).length === 0,
      60_000,
      'the deleted pod removed from the runtime',
    );
    // The kept pod: its status written again by the new agent, with the same container and address.
    await new Promise((r) => setTimeout(r, 3000));
    const after = await waitUntil(() => running('keep'), 30_000, 'pod keep still Running');
    const cs = after.status.containerStatuses[0];
    assert.equal(cs.containerID, id, 'the same container, adopted');
    assert.equal(cs.restartCount, 0);
    assert.equal(after.status.podIP, ip);
    const listed = await containersOf(before.metadata.uid!);
    assert.equal(listed.length, 1, 'no duplicate container');
    assert.equal(listed[0].state, 'CONTAINER_RUNNING');
    const sandboxes = await cri.call('ListPodSandbox', {
      filter: { labelSelector: { 'io.kubernetes.pod.uid': before.metadata.uid } },
    });
    assert.equal(sandboxes.items.length, 1, 'no second sandbox');
  });
});
