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

  it("finds kube-scheduler's number of feasible nodes (percentageOfNodesToScore unset)", () => {
    assert.equal(numFeasibleNodesToFind(50), 50);
    assert.equal(numFeasibleNodesToFind(100), 100);
    assert.equal(numFeasibleNodesToFind(1000), 420);
    assert.equal(numFeasibleNodesToFind(5000), 500);
    assert.equal(numFeasibleNodesToFind(20_000), 1000);
  });
});
