// The pod garbage collector against a real apiserver, with a short check
// period and quarantine: terminated pods over the threshold, pods of deleted
// nodes, terminating pods on out-of-service nodes.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { isNotFound, type Client } from '../../../shared/client';
import { retryOnConflict } from '../../app/controller-util';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import type { ControllerDescriptor } from '../../controller';
import { podsToCollect, startPodGCController } from './podgc';

const NS = 'podgc-test';
const fastPodGC: ControllerDescriptor = {
  name: 'podgc',
  start: (ctx) => void startPodGCController(ctx, { checkPeriodMs: 200, quarantineMs: 300 }),
};

describe('controller-manager: pod garbage collector', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;
  const pods = () => client.resource('pods').namespace(NS);
  const gone = (name: string) =>
    waitUntil(
      async () => {
        try {
          await pods().get(name);
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      10_000,
      `pod ${name} to be collected`,
    );

  async function pod(name: string, nodeName?: string, phase?: string): Promise<void> {
    const p = await pods().create({
      metadata: { name },
      spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
    });
    if (phase) await pods().updateStatus({ ...p, status: { phase } });
  }

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['podgc'], { terminatedPodGcThreshold: 2 }, [
      fastPodGC,
    ]);
    client = kcm.client;
    await client.resource('namespaces').create({ metadata: { name: NS } });
    await client.resource('nodes').create({ metadata: { name: 'n1' } });
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('deletes the oldest terminated pods beyond --terminated-pod-gc-threshold', async () => {
    await pod('done-1', 'n1', 'Succeeded');
    await pod('done-2', 'n1', 'Failed');
    await pod('done-3', 'n1', 'Succeeded');
    await pod('done-4', 'n1', 'Succeeded');
    await pod('running', 'n1', 'Running');
    await gone('done-1');
    await gone('done-2');
    await new Promise((r) => setTimeout(r, 500));
    const left = (await pods().list()).items.map((p) => p.metadata.name).sort();
    assert.deepEqual(left, ['done-3', 'done-4', 'running']);
  });

  it('fails and deletes pods bound to a node that no longer exists', async () => {
    await pod('orphan', 'no-such-node', 'Running');
    await gone('orphan');
  });

  it('force-deletes terminating pods on a NotReady out-of-service node', async () => {
    const nodes = client.resource('nodes');
    await nodes.create({
      metadata: { name: 'oos' },
      spec: {
        taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }],
      },
    });
    await retryOnConflict(async () => {
      const n = await nodes.get('oos');
      await nodes.updateStatus({
        ...n,
        status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] },
      });
    });
    await pod('stuck', 'oos', 'Running');
    await pods().delete('stuck', { gracePeriodSeconds: 300 });
    await gone('stuck');
  });
});

describe('controller-manager: pod garbage collector pass over all pods', () => {
  const now = new Date().toISOString();
  const ready = (name: string, taint?: string) => ({
    metadata: { name },
    spec: taint ? { taints: [{ key: taint, effect: 'NoExecute' }] } : {},
    status: { conditions: [{ type: 'Ready', status: taint ? 'False' : 'True' }] },
  });
  const nodes = [ready('n1'), ready('down', 'node.kubernetes.io/out-of-service')];
  const pod = (i: number, node?: string, phase?: string, deleting = false) => ({
    metadata: { name: `p${i}`, namespace: 'ns', ...(deleting ? { deletionTimestamp: now } : {}) },
    spec: node ? { nodeName: node } : {},
    status: phase ? { phase } : {},
  });

  it('sorts every pod into the collections it belongs to', async () => {
    const pods = [
      pod(0, 'n1'),
      pod(1, 'n1', 'Succeeded'),
      pod(2, 'down', 'Running', true),
      pod(3, 'down', 'Running'),
      pod(4, 'gone'),
      pod(5, 'gone', 'Failed'),
      pod(6, undefined, undefined, true),
    ];
    const found = await podsToCollect(pods, nodes);
    const names = (ps: { metadata: { name?: string } }[]) => ps.map((p) => p.metadata.name);
    assert.deepEqual(names(found.terminated), ['p1', 'p5']);
    assert.deepEqual(names(found.terminatingOutOfService), ['p2']);
    assert.deepEqual([...found.onMissingNodes.keys()], ['gone']);
    assert.deepEqual(names(found.onMissingNodes.get('gone')!), ['p4', 'p5']);
    assert.deepEqual(names(found.unscheduledTerminating), ['p6']);
  });

  it('offers the event loop a turn every 1,024 pods', async () => {
    const pods = Array.from({ length: 10_000 }, (_, i) => pod(i, i % 2 ? 'n1' : 'gone'));
    let turns = 0;
    let timerRan = false;
    setImmediate(() => (timerRan = true));
    const found = await podsToCollect(pods, nodes, () => {
      turns++;
      return turns === 5 ? new Promise<void>((r) => setImmediate(r)) : undefined;
    });
    assert.equal(turns, Math.ceil(pods.length / 1024));
    assert.ok(timerRan, 'a turn of the event loop was taken');
    assert.equal(found.onMissingNodes.get('gone')!.length, 5_000);
  });
});
