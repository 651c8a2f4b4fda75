import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { endpointController } from '../endpoint/endpoint';
import { endpointSliceController, CONTROLLER_NAME } from './endpointslice';

describe('controllers/endpoint and endpointslice', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start({ maxEndpointsPerSlice: 2 });
    await env.run(endpointController, endpointSliceController);
    await env.createNode('n1', { labels: { 'topology.kubernetes.io/zone': 'zone-a' } });
  });
  after(async () => env?.stop());

  const pods = () => env.client.resource('pods').namespace('default');
  const services = () => env.client.resource('services').namespace('default');
  const slicesOf = async (svc: string) =>
    (
      await env.client
        .resource('endpointslices.discovery.k8s.io')
        .namespace('default')
        .list({ labelSelector: `kubernetes.io/service-name=${svc}` })
    ).items;
  const endpointsOf = (svc: string) => env.client.resource('endpoints').namespace('default').get(svc);
  const runPod = async (name: string, app: string, ready: boolean) => {
    const p = await pods().create({
      metadata: { name, labels: { app } },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'c', image: 'img', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    });
    return env.setPodRunning(p, ready);
  };
  const ipOf = (p: KubeObject) => p.status.podIP as string;

  it('publishes ready and not-ready pods with ports resolved by name and number', async () => {
    const a = await runPod('web-a', 'web', true);
    const b = await runPod('web-b', 'web', false);
    const svc = await services().create({
      metadata: { name: 'web', labels: { tier: 'front' } },
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { name: 'metrics', port: 9090, targetPort: 9100 },
        ],
      },
    });
    const ep = await waitFor('Endpoints', async () => {
      try {
        const e = await endpointsOf('web');
        return e.subsets?.[0]?.addresses?.length === 1 && e.subsets[0].notReadyAddresses?.length === 1
          ? e
          : undefined;
      } catch {
        return undefined;
      }
    });
    assert.equal(ep.subsets.length, 1);
    assert.deepEqual(ep.subsets[0].addresses, [
      {
        ip: ipOf(a),
        nodeName: 'n1',
        targetRef: { kind: 'Pod', namespace: 'default', name: 'web-a', uid: a.metadata.uid },
      },
    ]);
    assert.equal(ep.subsets[0].notReadyAddresses[0].ip, ipOf(b));
    const ports = [...ep.subsets[0].ports].sort((x: any, y: any) => x.port - y.port);
    assert.deepEqual(ports, [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'metrics', port: 9100, protocol: 'TCP' },
    ]);
    assert.equal(ep.metadata.labels!.tier, 'front');

    const [slice] = await waitFor('a slice', async () => {
      const s = await slicesOf('web');
      return s.length === 1 && s[0].endpoints?.length === 2 ? s : undefined;
    });
    assert.match(slice.metadata.name!, /^web-/);
    assert.equal(slice.metadata.labels!['endpointslice.kubernetes.io/managed-by'], CONTROLLER_NAME);
    assert.equal(slice.metadata.labels!.tier, 'front');
    assert.deepEqual(slice.metadata.ownerReferences, [
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'web',
        uid: svc.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(slice.addressType, 'IPv4');
    const byName = Object.fromEntries(slice.endpoints.map((e: any) => [e.targetRef.name, e]));
    assert.deepEqual(byName['web-a'], {
      addresses: [ipOf(a)],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: 'web-a', uid: a.metadata.uid },
      nodeName: 'n1',
      zone: 'zone-a',
    });
    assert.deepEqual(byName['web-b'].conditions, { ready: false, serving: false, terminating: false });
    assert.deepEqual(
      [...slice.ports].sort((x: any, y: any) => x.port - y.port),
      [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9100, protocol: 'TCP' },
      ],
    );
  });

  it('shows terminating pods as terminating in slices and drops them from Endpoints', async () => {
    await pods().delete('web-a');
    const [slice] = await waitFor('terminating', async () => {
      const s = await slicesOf('web');
      const e = s[0]?.endpoints?.find((x: any) => x.targetRef.name === 'web-a');
      return e?.conditions?.terminating ? s : undefined;
    });
    const e = slice.endpoints.find((x: any) => x.targetRef.name === 'web-a');
    assert.deepEqual(e.conditions, { ready: false, serving: true, terminating: true });
    await waitFor('Endpoints without web-a', async () => {
      const ep = await endpointsOf('web');
      return !JSON.stringify(ep.subsets ?? []).includes('web-a');
    });
  });

  it('splits endpoints over slices of --max-endpoints-per-slice, publishNotReadyAddresses', async () => {
    for (const n of ['big-1', 'big-2', 'big-3']) await runPod(n, 'big', false);
    await services().create({
      metadata: { name: 'big' },
      spec: {
        selector: { app: 'big' },
        publishNotReadyAddresses: true,
        ports: [{ port: 80, targetPort: 8080 }],
      },
    });
    const slices = await waitFor('2 slices', async () => {
      const s = await slicesOf('big');
      const n = s.reduce((k, x) => k + (x.endpoints?.length ?? 0), 0);
      return s.length === 2 && n === 3 ? s : undefined;
    });
    for (const s of slices) assert.ok(s.endpoints.length <= 2);
    for (const s of slices) for (const e of s.endpoints) assert.equal(e.conditions.ready, true);
    assert.deepEqual(slices[0].ports, [{ name: '', port: 8080, protocol: 'TCP' }]);
    const ep = await waitFor('Endpoints', async () => {
      try {
        return await endpointsOf('big');
      } catch {
        return undefined;
      }
    });
    assert.equal(ep.subsets[0].addresses.length, 3);
    assert.deepEqual(ep.subsets[0].ports, [{ port: 8080, protocol: 'TCP' }]);
  });

  it('leaves Services without a selector and the kubernetes Service alone; placeholder slice when empty', async () => {
    await services().create({ metadata: { name: 'manual' }, spec: { ports: [{ port: 80 }] } });
    await services().create({
      metadata: { name: 'empty' },
      spec: { selector: { app: 'none' }, ports: [{ port: 80 }] },
    });
    const [placeholder] = await waitFor('placeholder', async () => {
      const s = await slicesOf('empty');
      return s.length === 1 ? s : undefined;
    });
    assert.deepEqual(placeholder.endpoints ?? [], []);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await slicesOf('manual')).length, 0);
    await assert.rejects(endpointsOf('manual'), /not found/);
    const k = await slicesOf('kubernetes');
    assert.ok(
      k.every((s) => s.metadata.labels!['endpointslice.kubernetes.io/managed-by'] !== CONTROLLER_NAME),
    );
    const kep = await endpointsOf('kubernetes');
    assert.equal(kep.subsets[0].addresses[0].ip, '127.0.0.1');
  });
  it('leaves settled slices alone: one name and resourceVersion while nothing changes', async () => {
    // kubectl create deployment calm --image=busybox; kubectl expose ... --port 80 --target-port 8080:
    // containers without ports, a Service port without a name and a numeric targetPort.
    for (const n of ['calm-1', 'calm-2', 'calm-3']) {
      const p = await pods().create({
        metadata: { name: n, labels: { app: 'calm' } },
        spec: { nodeName: 'n1', containers: [{ name: 'busybox', image: 'busybox' }] },
      });
      await env.setPodRunning(p, true);
    }
    // Eight Services over the same pods, two slices each (at most 2 endpoints a slice): whichever
    // order the slices' random names fall in, a settled slice keeps its endpoints.
    const names = Array.from({ length: 8 }, (_, i) => `calm-svc-${i}`);
    for (const n of names)
      await services().create({
        metadata: { name: n },
        spec: { selector: { app: 'calm' }, ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
      });
    const seen = (s: KubeObject[]) => s.map((x) => `${x.metadata.name}@${x.metadata.resourceVersion}`).sort();
    const settle = async (n: string) => {
      const slices = await waitFor(`3 endpoints in slices and Endpoints of ${n}`, async () => {
        const s = await slicesOf(n);
        const ep = await endpointsOf(n);
        return s.reduce((k, x) => k + (x.endpoints?.length ?? 0), 0) === 3 &&
          ep.subsets?.[0]?.addresses?.length === 3
          ? s
          : undefined;
      });
      return { slices: seen(slices), endpoints: (await endpointsOf(n)).metadata.resourceVersion };
    };
    const before = await Promise.all(names.map(settle));
    // A resync of each Service (an annotation the slices do not carry) must not write either.
    for (const n of names)
      await services().patch(n, { metadata: { annotations: { note: 'resync' } } }, 'merge');
    await new Promise((r) => setTimeout(r, 2000));
    for (const [i, n] of names.entries()) {
      assert.deepEqual(seen(await slicesOf(n)), before[i].slices, n);
      assert.equal((await endpointsOf(n)).metadata.resourceVersion, before[i].endpoints, n);
    }
  });
});
