import assert from 'node:assert/strict';
import { SharedIndexInformer, type ListerWatcher } from '../../../shared/informers';
import type { Obj } from './base';
import { CONTROLLER_UID_INDEX, claimCandidates, controllerUID } from './informers';
import { controllerRef } from './controller-ref';

describe('controllers/util: claim candidates from the controller-uid index', () => {
  const never: ListerWatcher<Obj> = {
    list: () => Promise.reject(new Error('not started')),
    watch: () => Promise.reject(new Error('not started')),
  };
  const owner = (name: string, ns = 'a'): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: ns, uid: `uid-${ns}-${name}` },
  });
  const pod = (name: string, ns: string, by?: Obj): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      uid: `pod-${ns}-${name}`,
      ...(by ? { ownerReferences: [controllerRef(by, 'apps/v1', 'ReplicaSet')] } : {}),
    },
  });
  const names = (objs: Obj[]) => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

  function informer(): SharedIndexInformer<Obj> {
    // Never run: the objects go into its indexer directly.
    return new SharedIndexInformer<Obj>(never, { indexers: { [CONTROLLER_UID_INDEX]: controllerUID } });
  }

  it('are the owner’s own objects and the orphans of its namespace, never another controller’s', () => {
    const [x, y] = [owner('x'), owner('y')];
    const inf = informer();
    for (const p of [
      pod('x1', 'a', x),
      pod('x2', 'a', x),
      pod('y1', 'a', y),
      pod('o1', 'a'),
      pod('o2', 'b'),
      pod('x3', 'b', owner('x', 'b')),
    ])
      inf.indexer.add(p);
    assert.deepEqual(names(claimCandidates(inf, x)), ['a/o1', 'a/x1', 'a/x2']);
    assert.deepEqual(names(claimCandidates(inf, y)), ['a/o1', 'a/y1']);
    // An owner nothing refers to still sees its namespace's orphans (to adopt them).
    assert.deepEqual(names(claimCandidates(inf, owner('z', 'b'))), ['b/o2']);
  });

  it('follow an object whose controller reference is added or removed', () => {
    const x = owner('x');
    const inf = informer();
    inf.indexer.add(pod('p', 'a'));
    assert.deepEqual(names(claimCandidates(inf, x)), ['a/p']);
    inf.indexer.update(pod('p', 'a', x));
    assert.deepEqual(names(claimCandidates(inf, owner('y'))), []);
    assert.deepEqual(names(claimCandidates(inf, x)), ['a/p']);
    inf.indexer.update(pod('p', 'a'));
    assert.deepEqual(names(claimCandidates(inf, owner('y'))), ['a/p']);
  });
});
