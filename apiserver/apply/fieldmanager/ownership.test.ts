// SPEC "Field ownership under apply": every row of the table, and the
// topology change effects.
import assert from 'node:assert/strict';
import type { JSONObject } from '../json-util';
import { applied, at, configMap, deployment, nginxDeployment, owners, statusOf, updated } from './fixtures';
import { structuralModel } from './schema-model';

const withReplicas = (replicas: number) => deployment({ replicas });

describe('field ownership under apply (SPEC table)', () => {
  it('A owns, B applies another value without force: 409, object unchanged', () => {
    const live = applied(null, withReplicas(3), 'A');
    const s = statusOf(() => applied(live, withReplicas(5), 'B'));
    assert.equal(s.code, 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal(s.message, 'Apply failed with 1 conflict: conflict with "A": .spec.replicas');
    assert.deepEqual(s.details?.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.spec.replicas' },
    ]);
    assert.equal(at(live, 'spec', 'replicas'), 3);
  });

  it('A owns, B applies another value with force: B alone owns it, removed from A', () => {
    const live = applied(null, deployment({ replicas: 3, paused: false }), 'A');
    const out = applied(live, withReplicas(5), 'B', { force: true });
    assert.equal(at(out, 'spec', 'replicas'), 5);
    assert.deepEqual(owners(out), { A: ['.spec.paused'], B: ['.spec.replicas'] });
  });

  it('A owns, B applies the same value: shared, value unchanged', () => {
    const live = applied(null, withReplicas(3), 'A');
    const out = applied(live, withReplicas(3), 'B');
    assert.equal(at(out, 'spec', 'replicas'), 3);
    assert.deepEqual(owners(out), { A: ['.spec.replicas'], B: ['.spec.replicas'] });
  });

  it('A owns, a non-apply write by B changes the value: B owns it, no conflict', () => {
    const live = applied(null, deployment({ replicas: 3, paused: false }), 'A');
    const next = structuredClone(live);
    (next.spec as JSONObject).replicas = 7;
    const out = updated(live, next, 'kube-controller-manager');
    assert.equal(at(out, 'spec', 'replicas'), 7);
    assert.deepEqual(owners(out), {
      A: ['.spec.paused'],
      'kube-controller-manager:Update': ['.spec.replicas'],
    });
  });

  it('shared, a sharer applies another value without force: conflict with the other sharer', () => {
    let live = applied(null, withReplicas(3), 'A');
    live = applied(live, withReplicas(3), 'B');
    assert.equal(
      statusOf(() => applied(live, withReplicas(4), 'A')).message,
      'Apply failed with 1 conflict: conflict with "B": .spec.replicas',
    );
    assert.equal(
      statusOf(() => applied(live, withReplicas(4), 'B')).message,
      'Apply failed with 1 conflict: conflict with "A": .spec.replicas',
    );
  });

  it('A owns alone, A applies without the field: removed (defaulting then resets it)', () => {
    const live = applied(null, deployment({ replicas: 3, paused: true }), 'A');
    const out = applied(live, deployment({ paused: true }), 'A');
    assert.equal(at(out, 'spec', 'replicas'), undefined);
    assert.deepEqual(owners(out), { A: ['.spec.paused'] });
  });

  it('owned by A and B, A applies without the field: B owns it, value unchanged', () => {
    let live = applied(null, deployment({ replicas: 3, paused: true }), 'A');
    live = applied(live, withReplicas(3), 'B');
    const out = applied(live, deployment({ paused: true }), 'A');
    assert.equal(at(out, 'spec', 'replicas'), 3);
    assert.deepEqual(owners(out), { A: ['.spec.paused'], B: ['.spec.replicas'] });
  });

  it('owned by A and by an Update manager, A applies without the field: the updater keeps it', () => {
    const live = applied(null, deployment({ replicas: 3, paused: true }), 'A');
    const next = structuredClone(live);
    (next.spec as JSONObject).replicas = 4;
    const scaled = updated(live, next, 'hpa');
    const out = applied(scaled, deployment({ paused: true }), 'A');
    assert.equal(at(out, 'spec', 'replicas'), 4);
  });

  describe('list and map items follow the same rule', () => {
    const cm = (data: JSONObject, labels: JSONObject) => configMap(data, { labels });
    /** A ConfigMap configuration without data. */
    const bare = (metadata: JSONObject = {}) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: 'default', ...metadata },
    });

    it('map entries: those A alone owned go, shared ones stay with the other owner', () => {
      let live = applied(null, cm({ a: '1', b: '2' }, { app: 'web', tier: 'fe' }), 'A');
      live = applied(live, cm({ b: '2' }, { app: 'web' }), 'B');
      const out = applied(live, bare(), 'A');
      assert.deepEqual(out.data, { b: '2' });
      assert.deepEqual(at(out, 'metadata', 'labels'), { app: 'web' });
      assert.deepEqual(owners(out), { B: ['.data.b', '.metadata.labels.app'] });
    });

    it('map-list items (containers by name): dropped items go, with their fields', () => {
      const two = nginxDeployment();
      const containers = at(two, 'spec', 'template', 'spec', 'containers') as JSONObject[];
      containers.push({ name: 'sidecar', image: 'envoy:1', args: ['--v=2'] });
      const live = applied(null, two, 'kubectl');
      const out = applied(live, nginxDeployment(), 'kubectl');
      const names = (at(out, 'spec', 'template', 'spec', 'containers') as JSONObject[]).map((c) => c.name);
      assert.deepEqual(names, ['nginx']);
    });

    it('a map-list item another manager also applied stays', () => {
      const sidecar = deployment({
        template: { spec: { containers: [{ name: 'sidecar', image: 'envoy:1' }] } },
      });
      const two = nginxDeployment();
      (at(two, 'spec', 'template', 'spec', 'containers') as JSONObject[]).push({
        name: 'sidecar',
        image: 'envoy:1',
      });
      let live = applied(null, two, 'kubectl');
      live = applied(live, sidecar, 'injector');
      const out = applied(live, nginxDeployment(), 'kubectl');
      const cs = at(out, 'spec', 'template', 'spec', 'containers') as JSONObject[];
      assert.deepEqual(
        cs.map((c) => [c.name, c.image]),
        [
          ['nginx', 'nginx:1.14.2'],
          ['sidecar', 'envoy:1'],
        ],
      );
      assert.ok(owners(out).injector.includes('.spec.template.spec.containers[name="sidecar"].image'));
    });

    it('set items (finalizers): an item A alone applied goes, a shared one stays', () => {
      const fin = (f: string[]) => bare({ finalizers: f });
      let live = applied(null, fin(['example.com/a', 'example.com/b']), 'A');
      live = applied(live, fin(['example.com/b']), 'B');
      const out = applied(live, bare(), 'A');
      assert.deepEqual(at(out, 'metadata', 'finalizers'), ['example.com/b']);
      assert.deepEqual(owners(out), { B: ['.metadata.finalizers[="example.com/b"]'] });
    });
  });
});

describe('topology change effects', () => {
  const schema = (items: JSONObject) => ({
    type: 'object',
    properties: { spec: { type: 'object', properties: { items } } },
  });
  const mapList = {
    type: 'array',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } },
  };
  const atomicList = { ...mapList, 'x-kubernetes-list-type': 'atomic' };
  delete (atomicList as JSONObject)['x-kubernetes-list-map-keys'];
  const granular = structuralModel(schema(mapList));
  const atomic = structuralModel(schema(atomicList));
  const widget = (items: JSONObject[]) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'default' },
    spec: { items },
  });

  it('granular -> atomic: element owners own the whole list, and changes conflict', () => {
    let live = applied(null, widget([{ name: 'a', value: '1' }]), 'A', { model: granular });
    live = applied(live, widget([{ name: 'b', value: '2' }]), 'B', { model: granular });
    assert.equal(at(live, 'spec', 'items', 'length'), 2);
    const s = statusOf(() => applied(live, widget([{ name: 'c', value: '3' }]), 'C', { model: atomic }));
    assert.equal(s.code, 409);
    assert.equal(
      s.message,
      'Apply failed with 2 conflicts: conflicts with "A":\n- .spec.items\nconflicts with "B":\n- .spec.items',
    );
    const forced = applied(live, widget([{ name: 'c', value: '3' }]), 'C', { model: atomic, force: true });
    assert.deepEqual(at(forced, 'spec', 'items'), [{ name: 'c', value: '3' }]);
    assert.deepEqual(owners(forced), { C: ['.spec.items'] });
  });

  it('atomic -> granular: no conflict; the former owner keeps the top-level field only', () => {
    const live = applied(null, widget([{ name: 'a', value: '1' }]), 'A', { model: atomic });
    assert.deepEqual(owners(live), { A: ['.spec.items'] });
    const out = applied(live, widget([{ name: 'b', value: '2' }]), 'B', { model: granular });
    assert.deepEqual(at(out, 'spec', 'items'), [
      { name: 'a', value: '1' },
      { name: 'b', value: '2' },
    ]);
    assert.deepEqual(owners(out).A, ['.spec.items']);
    assert.deepEqual(owners(out).B, [
      '.spec.items[name="b"]',
      '.spec.items[name="b"].name',
      '.spec.items[name="b"].value',
    ]);
  });

  it('granular -> atomic on a struct: the owners of its fields own the struct', () => {
    const s1 = structuralModel({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ref: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } },
          },
        },
      },
    });
    const s2 = structuralModel({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ref: {
              type: 'object',
              'x-kubernetes-map-type': 'atomic',
              properties: { a: { type: 'string' }, b: { type: 'string' } },
            },
          },
        },
      },
    });
    const w = (ref: JSONObject) => ({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { ref },
    });
    const live = applied(null, w({ a: '1' }), 'A', { model: s1 });
    const s = statusOf(() => applied(live, w({ b: '2' }), 'B', { model: s2 }));
    assert.equal(s.message, 'Apply failed with 1 conflict: conflict with "A": .spec.ref');
  });
});
