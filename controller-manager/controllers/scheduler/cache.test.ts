import assert from 'node:assert/strict';
import type { Obj } from '../util/base';
import { SchedulerCache } from './cache';
import { numFeasibleNodesToFind } from './algorithm';

const pod = (
  name: string,
  o: { node?: string; cpu?: string; hostPort?: number; phase?: string } = {},
): Obj => ({
  metadata: {
    name,
    namespace: 'default',
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true },
    ],
  },
  spec: {
    ...(o.node ? { nodeName: o.node } : {}),
    containers: [
      {
        name: 'c',
        image: 'img',
        ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}),
        ...(o.hostPort ? { ports: [{ containerPort: 80, hostPort: o.hostPort }] } : {}),
      },
    ],
  },
  status: { phase: o.phase ?? 'Pending' },
});

describe('controllers/scheduler: cache', () => {
  it('counts assumed pods on their node until the informer shows them bound, without counting twice', () => {
    const c = new SchedulerCache();
    c.assume('default/a', pod('a', { cpu: '250m', hostPort: 8080 }), 'n1');
    assert.equal(c.usage('n1').pods, 1);
    assert.equal(c.usage('n1').requested.get('cpu'), 250);
    assert.deepEqual([...c.usage('n1').hostPorts.keys()], ['TCP/0.0.0.0/8080']);
    assert.equal(c.usage('n1').owners.get('rs-uid'), 1);
    // A status update of the still unbound pod leaves the assumption alone.
    c.podSeen('default/a', pod('a', { cpu: '250m', hostPort: 8080 }));
    assert.equal(c.usage('n1').pods, 1);
    // Bound as assumed: counted once.
    c.podSeen('default/a', pod('a', { node: 'n1', cpu: '250m', hostPort: 8080 }));
    assert.equal(c.usage('n1').pods, 1);
    assert.equal(c.usage('n1').nonZeroCpu, 250);
    // forget() only drops assumptions, never a bound pod.
    c.forget('default/a');
    assert.equal(c.usage('n1').pods, 1);
  });

  it('frees a node when its pod finishes, is deleted, or its binding is forgotten', () => {
    const c = new SchedulerCache();
    c.podSeen('default/a', pod('a', { node: 'n1', cpu: '1' }));
    c.podSeen('default/b', pod('b', { node: 'n1' }));
    assert.equal(c.usage('n1').pods, 2);
    assert.equal(c.usage('n1').nonZeroCpu, 1100, 'a container without requests counts 100m for scoring');
    c.podSeen('default/a', pod('a', { node: 'n1', cpu: '1', phase: 'Succeeded' }));
    assert.equal(c.usage('n1').pods, 1);
    assert.equal(c.usage('n1').requested.get('cpu') ?? 0, 0);
    c.podGone('default/b');
    assert.equal(c.usage('n1').pods, 0);
    c.assume('default/x', pod('x'), 'n2');
    c.forget('default/x');
    assert.equal(c.usage('n2').pods, 0);
    assert.equal(c.usage('n2').owners.size, 0);
  });

  it('follows a bound pod whose requests change (in-place resize)', () => {
    const c = new SchedulerCache();
    c.podSeen('default/a', pod('a', { node: 'n1', cpu: '1' }));
    c.podSeen('default/a', pod('a', { node: 'n1', cpu: '2' }));
    assert.equal(c.usage('n1').requested.get('cpu'), 2000);
    assert.equal(c.usage('n1').pods, 1);
  });

  it('keeps the node snapshot from node events: replaced in place, removed by swap, images counted per node', () => {
    const node = (name: string, images: string[] = [], ready = 'True'): Obj => ({
      metadata: { name },
      status: {
        allocatable: { cpu: '2', pods: '10' },
        conditions: [{ type: 'Ready', status: ready }],
        images: images.map((n) => ({ names: [n], sizeBytes: 1000 })),
      },
    });
    const c = new SchedulerCache();
    c.nodeSet(node('a', ['nginx']));
    c.nodeSet(node('b', ['nginx:1.25']));
    c.nodeSet(node('c', ['nginx']));
    c.podSeen('default/p', pod('p', { node: 'b', cpu: '500m' }));
    assert.equal(c.imageNodes.get('nginx:latest'), 2, 'an untagged image is :latest');
    assert.equal(c.imageNodes.get('nginx:1.25'), 1);
    // An update replaces the node where it stands; its usage stays.
    c.nodeSet(node('b', [], 'False'));
    assert.deepEqual(
      c.nodes().map((n) => n.name),
      ['a', 'b', 'c'],
    );
    assert.equal(c.node('b')!.usage.requested.get('cpu'), 500);
    assert.deepEqual(c.node('b')!.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    assert.equal(c.imageNodes.get('nginx:1.25'), undefined);
    assert.equal(c.node('a')!.allocatable.get('cpu'), 2000);
    // Removing the first moves the last into its place.
    c.nodeGone('a');
    assert.deepEqual(
      c.nodes().map((n) => n.name),
      ['c', 'b'],
    );
    assert.equal(c.imageNodes.get('nginx:latest'), 1);
    c.nodeGone('c');
    c.nodeGone('b');
    assert.equal(c.nodes().length, 0);
    // The pod still holds its place on the name until it goes.
    assert.equal(c.usage('b').pods, 1);
  });

  it("finds kube-scheduler's number of feasible nodes (percentageOfNodesToScore unset)", () => {
    assert.equal(numFeasibleNodesToFind(50), 50);
    assert.equal(numFeasibleNodesToFind(100), 100);
    assert.equal(numFeasibleNodesToFind(1000), 420);
    assert.equal(numFeasibleNodesToFind(5000), 500);
    assert.equal(numFeasibleNodesToFind(20_000), 1000);
  });
});
