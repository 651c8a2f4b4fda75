// The indexer, listers and the filtering handler, without a server.
import assert from 'node:assert/strict';
import type { KubeObject } from '../client/types';
import { DeletedFinalStateUnknown, Indexer, metaNamespaceKey } from './store';
import { Lister } from './lister';
import { filteringHandler } from './handlers';

const pod = (ns: string, name: string, labels: Record<string, string> = {}, node = ''): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: ns, name, labels, resourceVersion: '1' },
  spec: { nodeName: node },
});

describe('shared/informers: indexer and listers', () => {
  it('keys by namespace/name and keeps the namespace and custom indexes current', () => {
    const idx = new Indexer<KubeObject>(undefined, {
      namespace: (o) => [o.metadata.namespace ?? ''],
      node: (o) => (o.spec?.nodeName ? [o.spec.nodeName] : []),
    });
    idx.add(pod('a', 'p1', {}, 'n1'));
    idx.add(pod('a', 'p2', {}, 'n1'));
    idx.add(pod('b', 'p1', {}, 'n2'));
    assert.equal(metaNamespaceKey(pod('a', 'p1')), 'a/p1');
    assert.equal(metaNamespaceKey({ metadata: { name: 'node1' } }), 'node1');
    assert.deepEqual(idx.listKeys().sort(), ['a/p1', 'a/p2', 'b/p1']);
    assert.deepEqual(idx.indexKeys('node', 'n1').sort(), ['a/p1', 'a/p2']);
    idx.update(pod('a', 'p2', {}, 'n2'));
    assert.deepEqual(idx.indexKeys('node', 'n1'), ['a/p1']);
    assert.deepEqual(idx.indexKeys('node', 'n2').sort(), ['a/p2', 'b/p1']);
    idx.delete(new DeletedFinalStateUnknown('a/p1', pod('a', 'p1')));
    assert.deepEqual(idx.listIndexValues('node').sort(), ['n2']);
    assert.deepEqual(
      idx.byIndex('namespace', 'a').map((o) => o.metadata.name),
      ['p2'],
    );
    assert.deepEqual(
      idx
        .index('node', pod('x', 'y', {}, 'n2'))
        .map(metaNamespaceKey)
        .sort(),
      ['a/p2', 'b/p1'],
    );
    idx.addIndexers({ label: (o) => Object.keys(o.metadata.labels ?? {}) });
    assert.throws(() => idx.byIndex('nope', 'x'), /does not exist/);
    idx.replace([pod('c', 'q', { app: 'web' })]);
    assert.deepEqual(idx.listKeys(), ['c/q']);
    assert.deepEqual(idx.indexKeys('label', 'app'), ['c/q']);
    assert.deepEqual(idx.indexKeys('node', 'n2'), []);
  });

  it('lists by namespace and label selector', () => {
    const idx = new Indexer<KubeObject>();
    idx.add(pod('a', 'web1', { app: 'web', tier: 'fe' }));
    idx.add(pod('a', 'db1', { app: 'db' }));
    idx.add(pod('b', 'web2', { app: 'web' }));
    const l = new Lister(idx);
    assert.equal(l.list().length, 3);
    assert.deepEqual(l.list('app=web').map(metaNamespaceKey).sort(), ['a/web1', 'b/web2']);
    assert.deepEqual(l.list({ app: 'web', tier: 'fe' }).map(metaNamespaceKey), ['a/web1']);
    assert.deepEqual(l.namespace('a').list('app in (web,db)').map(metaNamespaceKey).sort(), [
      'a/db1',
      'a/web1',
    ]);
    assert.equal(l.namespace('b').get('web2')?.metadata.name, 'web2');
    assert.equal(l.namespace('b').get('web1'), undefined);
    assert.equal(l.get('a/db1')?.metadata.name, 'db1');
  });

  it('filters handler calls, turning updates across the edge into adds and deletes', () => {
    const calls: string[] = [];
    const h = filteringHandler<KubeObject>(
      (o) => (o instanceof DeletedFinalStateUnknown ? o.obj : o).metadata.labels?.keep === 'y',
      {
        onAdd: (o) => calls.push(`add ${o.metadata.name}`),
        onUpdate: (_o, n) => calls.push(`update ${n.metadata.name}`),
        onDelete: (o) =>
          calls.push(`delete ${(o instanceof DeletedFinalStateUnknown ? o.obj : o).metadata.name}`),
      },
    );
    const yes = pod('a', 'p', { keep: 'y' });
    const no = pod('a', 'p', { keep: 'n' });
    h.onAdd!(no, false);
    h.onAdd!(yes, false);
    h.onUpdate!(yes, yes);
    h.onUpdate!(yes, no);
    h.onUpdate!(no, yes);
    h.onUpdate!(no, no);
    h.onDelete!(new DeletedFinalStateUnknown('a/p', yes));
    assert.deepEqual(calls, ['add p', 'update p', 'delete p', 'add p', 'delete p']);
  });
});
