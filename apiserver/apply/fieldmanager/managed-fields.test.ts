// metadata.managedFields maintenance: entries, order, times, caps, ignored and reset fields, errors.
import assert from 'node:assert/strict';
import type { JSONObject } from '../json-util';
import { apply, update } from './field-manager';
import {
  applied,
  at,
  configMap,
  deployment,
  nginxDeployment,
  owners,
  pod,
  statusOf,
  stored,
  T0,
  ticking,
  updated,
} from './fixtures';
import { LAST_APPLIED_ANNOTATION } from './last-applied';
import { resetFieldsFor } from './reset-fields';

type Entry = JSONObject;
const entries = (o: JSONObject) => (at(o, 'metadata', 'managedFields') ?? []) as Entry[];
const summary = (o: JSONObject) =>
  entries(o).map((e) => [
    e.manager,
    e.operation,
    e.apiVersion,
    e.time,
    ...(e.subresource ? [e.subresource] : []),
  ]);

describe('managedFields entries', () => {
  it('one Apply entry per manager, carrying the latest apiVersion and time', () => {
    const now = ticking();
    let o = stored(
      apply(null, deployment({ replicas: 1 }), { manager: 'kubectl', apiVersion: 'apps/v1', now }),
    );
    o = stored(apply(o, deployment({ replicas: 2 }), { manager: 'kubectl', apiVersion: 'apps/v1', now }));
    assert.deepEqual(summary(o), [['kubectl', 'Apply', 'apps/v1', '2024-05-01T10:00:02Z']]);
  });

  it('Update entries per manager, apiVersion and subresource, ordered Apply first, then by time and name', () => {
    const now = ticking();
    let o = stored(
      apply(null, deployment({ replicas: 1 }), { manager: 'kubectl', apiVersion: 'apps/v1', now }),
    );
    const step = (patch: (x: JSONObject) => void, manager: string, extra: JSONObject = {}) => {
      const next = structuredClone(o);
      patch(next);
      o = stored(update(o, next, { manager, apiVersion: 'apps/v1', now, ...extra }));
    };
    step((x) => ((x.metadata as JSONObject).labels = { a: '1' }), 'zeta');
    step((x) => ((x.status as JSONObject) = { replicas: 1 }), 'zeta', { subresource: 'status' });
    step((x) => ((x.metadata as JSONObject).annotations = { b: '2' }), 'alpha');
    assert.deepEqual(summary(o), [
      ['kubectl', 'Apply', 'apps/v1', '2024-05-01T10:00:01Z'],
      ['zeta', 'Update', 'apps/v1', '2024-05-01T10:00:02Z'],
      ['zeta', 'Update', 'apps/v1', '2024-05-01T10:00:03Z', 'status'],
      ['alpha', 'Update', 'apps/v1', '2024-05-01T10:00:04Z'],
    ]);
  });

  it('an Update entry keeps its time when the write changes nothing it owns; a no-op apply too', () => {
    const now = ticking();
    let o = stored(update(null, configMap({ a: '1' }), { manager: 'creator', apiVersion: 'v1', now }));
    o = stored(update(o, structuredClone(o), { manager: 'creator', apiVersion: 'v1', now }));
    assert.equal(entries(o)[0].time, '2024-05-01T10:00:01Z');
    let p = stored(apply(null, configMap({ a: '1' }), { manager: 'A', apiVersion: 'v1', now }));
    p = stored(apply(p, configMap({ a: '1' }), { manager: 'A', apiVersion: 'v1', now }));
    assert.equal(entries(p)[0].time, '2024-05-01T10:00:02Z');
  });

  it('keeps at most 10 Update entries, merging the oldest into ancient-changes', () => {
    const now = ticking();
    let o = stored(update(null, configMap({}), { manager: 'creator', apiVersion: 'v1', now }));
    for (let i = 0; i < 12; i++) {
      const next = structuredClone(o);
      next.data = { ...(next.data as JSONObject), [`k${i}`]: String(i) };
      o = stored(update(o, next, { manager: `writer-${i}`, apiVersion: 'v1', now }));
    }
    const names = entries(o).map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.equal(names[0], 'ancient-changes');
    // The creator's entry (it created .data) and the three oldest writers.
    assert.deepEqual(owners(o)['ancient-changes:Update'], ['.data', '.data.k0', '.data.k1', '.data.k2']);
  });

  it('drops entries left empty', () => {
    let o = applied(null, deployment({ replicas: 1 }), 'A');
    o = applied(o, deployment({ replicas: 2 }), 'B', { force: true });
    assert.deepEqual(Object.keys(owners(o)), ['B']);
  });

  it('never records apiVersion, kind, name, namespace, uid, resourceVersion, generation, timestamps or managedFields', () => {
    const next = configMap(
      { a: '1' },
      {
        uid: 'u',
        resourceVersion: '9',
        generation: 3,
        creationTimestamp: '2024-01-01T00:00:00Z',
        selfLink: '/x',
      },
    );
    const o = updated(null, next, 'creator');
    assert.deepEqual(owners(o), { 'creator:Update': ['.data', '.data.a'] });
    const del = structuredClone(o);
    Object.assign(del.metadata as JSONObject, {
      deletionTimestamp: '2024-01-02T00:00:00Z',
      deletionGracePeriodSeconds: 30,
    });
    assert.deepEqual(owners(updated(o, del, 'deleter')), owners(o));
  });

  it('reset fields: the main resource does not own status, /status owns only status', () => {
    const scope = { group: 'apps', resource: 'deployments', hasStatusSubresource: true };
    const live = applied(null, nginxDeployment(), 'kubectl', { resetFields: resetFieldsFor(scope) });
    const main = structuredClone(live);
    (main.spec as JSONObject).paused = true;
    main.status = { replicas: 3 };
    const o1 = updated(live, main, 'editor', { resetFields: resetFieldsFor(scope) });
    assert.deepEqual(owners(o1)['editor:Update'], ['.spec.paused']);
    const st = structuredClone(live);
    (st.spec as JSONObject).paused = true;
    (st.metadata as JSONObject).labels = { changed: 'yes' };
    (st.metadata as JSONObject).annotations = { note: 'x' };
    st.status = { replicas: 3 };
    const o2 = updated(live, st, 'controller', {
      subresource: 'status',
      resetFields: resetFieldsFor(scope, 'status'),
    });
    // Neither the spec nor (for Deployments) labels are owned through /status.
    assert.deepEqual(owners(o2)['controller:Update/status'], [
      '.metadata.annotations',
      '.metadata.annotations.note',
      '.status.replicas',
    ]);
  });

  it('an object without ownership stays untracked by updates, and its first apply records before-first-apply', () => {
    const bare = stored(configMap({ a: '1', b: '2' }));
    const next = structuredClone(bare);
    next.data = { a: '1', b: '3' };
    const u = updated(bare, next, 'editor');
    assert.equal(at(u, 'metadata', 'managedFields'), undefined);
    const s = statusOf(() => applied(u, configMap({ b: '4' }), 'A'));
    assert.equal(
      s.message,
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.b',
    );
    const o = applied(u, configMap({ b: '3' }), 'A');
    assert.deepEqual(owners(o), {
      A: ['.data.b'],
      'before-first-apply:Update': ['.data', '.data.a', '.data.b'],
    });
  });

  it('lets kubectl move from client-side to server-side apply, keeping last-applied in step', () => {
    const cfg = configMap({ a: '1', b: '2' });
    const live0 = configMap(
      { a: '1', b: '2' },
      { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(cfg) + '\n' } },
    );
    const live = updated(null, live0, 'kubectl-client-side-apply');
    const out = applied(live, configMap({ a: '1', b: '9' }), 'kubectl');
    assert.deepEqual(out.data, { a: '1', b: '9' });
    assert.equal(
      at(out, 'metadata', 'annotations', LAST_APPLIED_ANNOTATION),
      '{"apiVersion":"v1","data":{"a":"1","b":"9"},"kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}}\n',
    );
    // Other managers get no such allowance.
    const s = statusOf(() => applied(live, configMap({ b: '9' }), 'other'));
    assert.equal(
      s.message,
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.b',
    );
    // Nor does kubectl for fields last-applied does not vouch for.
    const moved = structuredClone(live);
    moved.data = { a: '1', b: '2', c: '3' };
    const withC = updated(live, moved, 'editor');
    assert.equal(statusOf(() => applied(withC, configMap({ c: '4' }), 'kubectl')).code, 409);
  });

  it('names every conflicting manager and field, grouped in the message', () => {
    let o = applied(null, deployment({ replicas: 1, paused: false, minReadySeconds: 5 }), 'A');
    const next = structuredClone(o);
    Object.assign(next.spec as JSONObject, { replicas: 2, paused: true });
    o = updated(o, next, 'hpa');
    const s = statusOf(() => applied(o, deployment({ replicas: 3, paused: false, minReadySeconds: 6 }), 'B'));
    assert.equal(
      s.message,
      'Apply failed with 3 conflicts: conflicts with "A":\n- .spec.minReadySeconds\nconflicts with "hpa" using apps/v1:\n- .spec.paused\n- .spec.replicas',
    );
    assert.deepEqual(
      s.details?.causes?.map((c) => [c.reason, c.message, c.field]),
      [
        ['FieldManagerConflict', 'conflict with "A"', '.spec.minReadySeconds'],
        ['FieldManagerConflict', 'conflict with "hpa" using apps/v1', '.spec.paused'],
        ['FieldManagerConflict', 'conflict with "hpa" using apps/v1', '.spec.replicas'],
      ],
    );
  });

  describe('apply errors', () => {
    it('a field the schema does not declare is 500 with Kubernetes wording', () => {
      const s = statusOf(() => applied(null, deployment({ replicaz: 1 }), 'A'));
      assert.equal(s.code, 500);
      assert.equal(
        s.message,
        'failed to create typed patch object (default/nginx; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema',
      );
    });
    it('map-list items without their key, or twice, are rejected', () => {
      const svc = (ports: JSONObject[]) => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { ports },
      });
      const s = statusOf(() => applied(null, svc([{ name: 'http' }]), 'A'));
      assert.equal(
        s.message,
        'failed to create typed patch object (/s; /v1, Kind=Service): .spec.ports: element 0: associative list with keys has an element that omits key field "port" (and doesn\'t have default value)',
      );
      const d = statusOf(() => applied(null, pod({ containers: [{ name: 'a' }, { name: 'a' }] }), 'A'));
      assert.match(d.message ?? '', /\.spec\.containers: duplicate entries for key \[name="a"\]$/);
    });
    it('another kind or version is 400', () => {
      const s = statusOf(() =>
        apply(null, configMap({}), { manager: 'A', apiVersion: 'apps/v1', kind: 'Deployment' }),
      );
      assert.equal(s.code, 400);
      assert.equal(s.message, 'invalid object type: /v1, Kind=ConfigMap');
    });
  });

  describe('non-apply writes', () => {
    it('take managedFields written by the client when they decode, else keep the live ones', () => {
      const live = applied(null, configMap({ a: '1' }), 'A');
      const edited = structuredClone(live);
      ((at(edited, 'metadata', 'managedFields', 0) as JSONObject).manager as string) = 'renamed';
      assert.deepEqual(Object.keys(owners(updated(live, edited, 'editor'))), ['renamed']);
      const broken = structuredClone(live);
      (at(broken, 'metadata', 'managedFields', 0) as JSONObject).operation = 'Bogus';
      assert.deepEqual(Object.keys(owners(updated(live, broken, 'editor'))), ['A']);
    });
    it('never fail: an object the schema cannot read keeps the live entries', () => {
      const live = applied(null, pod({ containers: [{ name: 'a', image: 'x' }] }), 'A', { apiVersion: 'v1' });
      const bad = structuredClone(live);
      (bad.spec as JSONObject).containers = [{ image: 'no-name' }];
      const out = update(live, bad, { manager: 'editor', apiVersion: 'v1', now: new Date(T0) });
      assert.deepEqual(at(out, 'metadata', 'managedFields'), at(live, 'metadata', 'managedFields'));
    });
  });
});
