// SPEC "Server-side apply": the ten rules, through the handler entry point where it matters.
import assert from 'node:assert/strict';
import { applyPatch, patchKindOf, type PatchContext } from '../index';
import type { JSONObject } from '../json-util';
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
  updated,
} from './fixtures';
import { fieldNode, UNSTRUCTURED_WITH_METADATA } from './schema-model';

const ctx = (o: Partial<PatchContext> = {}): PatchContext => ({
  apiVersion: 'apps/v1',
  now: new Date(T0),
  ...o,
});

describe('server-side apply (SPEC rules)', () => {
  it('1. apply is PATCH with application/apply-patch+yaml; the body is a partial object, YAML or JSON', () => {
    assert.equal(patchKindOf('application/apply-patch+yaml; charset=utf-8', true), 'apply');
    assert.equal(patchKindOf('application/apply-patch+yaml', false), 'apply');
    const yaml = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\nspec:\n  replicas: 2\n';
    const created = stored(applyPatch('apply', null, yaml, ctx({ manager: 'kubectl' })));
    assert.equal(at(created, 'spec', 'replicas'), 2);
    const json = JSON.stringify(deployment({ paused: true }));
    const out = applyPatch('apply', created, Buffer.from(json), ctx({ manager: 'kubectl' }));
    assert.deepEqual(out.spec, { paused: true });
  });

  it('2. fieldManager is required for apply (422) and defaults from the user agent otherwise', () => {
    const s = statusOf(() => applyPatch('apply', null, deployment(), ctx()));
    assert.equal(s.code, 422);
    assert.equal(
      s.message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    assert.deepEqual(s.details?.causes, [
      {
        reason: 'FieldValueRequired',
        message: 'Required value: is required for apply patch',
        field: 'fieldManager',
      },
    ]);
    const live = applied(null, deployment({ replicas: 1 }), 'kubectl');
    const ua = 'kubectl/v1.30.2 (linux/amd64) kubernetes/3968350';
    const out = applyPatch('merge', live, '{"spec":{"replicas":2}}', ctx({ userAgent: ua }));
    assert.deepEqual(Object.keys(owners(out)), ['kubectl:Update']);
    const anon = applyPatch('merge', live, '{"spec":{"replicas":2}}', ctx({}));
    assert.deepEqual(Object.keys(owners(anon)), ['unknown:Update']);
  });

  it('3. an applied object must not carry managedFields (400)', () => {
    const cfg = deployment({}, { managedFields: [] });
    const s = statusOf(() => applied(null, cfg, 'kubectl'));
    assert.equal(s.code, 400);
    assert.equal(s.reason, 'BadRequest');
    assert.equal(s.message, 'metadata.managedFields must be nil');
  });

  it('4. only apply fails on conflicts; force overrides; force is for apply only', () => {
    const live = applied(null, deployment({ replicas: 3 }), 'A');
    assert.doesNotThrow(() => applyPatch('merge', live, '{"spec":{"replicas":4}}', ctx({ manager: 'B' })));
    assert.equal(
      statusOf(() => applyPatch('apply', live, deployment({ replicas: 4 }), ctx({ manager: 'B' }))).code,
      409,
    );
    const forced = applyPatch('apply', live, deployment({ replicas: 4 }), ctx({ manager: 'B', force: true }));
    assert.equal(at(forced, 'spec', 'replicas'), 4);
    const s = statusOf(() => applyPatch('merge', live, '{}', ctx({ manager: 'B', force: true })));
    assert.equal(s.code, 422);
    assert.equal(
      s.message,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
  });

  it('5. apply needs no prior read and no resourceVersion: it creates, then updates', () => {
    const created = applied(null, configMap({ a: '1' }), 'ctrl');
    assert.deepEqual(created.data, { a: '1' });
    const again = applied(created, configMap({ a: '2' }), 'ctrl');
    assert.deepEqual(again.data, { a: '2' });
  });

  it('6. fields the applier applied before, no longer applies and nobody else owns are removed', () => {
    const live = applied(null, nginxDeployment(3), 'kubectl');
    const cfg = nginxDeployment();
    delete (cfg.spec as JSONObject).replicas;
    // Defaulting after the merge resets replicas to its default.
    const defaulter = (o: JSONObject) => {
      (o.spec as JSONObject).replicas ??= 1;
    };
    const out = applyPatch('apply', live, cfg, ctx({ manager: 'kubectl', defaulter }));
    assert.equal(at(out, 'spec', 'replicas'), 1);
    assert.ok(!owners(out).kubectl.includes('.spec.replicas'));
  });

  it('7. a conflict is resolved by forcing, dropping the field, or applying the live value', () => {
    const live = updated(
      applied(null, deployment({ replicas: 3, paused: false }), 'kubectl'),
      deployment({ replicas: 5, paused: false }),
      'hpa',
    );
    const mine = (replicas?: number) =>
      deployment(replicas === undefined ? { paused: true } : { replicas, paused: true });
    const s = statusOf(() => applied(live, mine(3), 'kubectl'));
    assert.equal(
      s.message,
      'Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas',
    );
    assert.equal(at(applied(live, mine(3), 'kubectl', { force: true }), 'spec', 'replicas'), 3);
    const dropped = applied(live, mine(), 'kubectl');
    assert.equal(at(dropped, 'spec', 'replicas'), 5);
    assert.deepEqual(owners(dropped), { kubectl: ['.spec.paused'], 'hpa:Update': ['.spec.replicas'] });
    const same = applied(live, mine(5), 'kubectl');
    assert.deepEqual(owners(same).kubectl, ['.spec.paused', '.spec.replicas']);
  });

  describe('8. merge markers', () => {
    const base = () =>
      applied(
        null,
        pod(
          {
            containers: [
              {
                name: 'app',
                image: 'app:1',
                args: ['--a', '--b'],
                ports: [{ containerPort: 80, protocol: 'TCP' }],
              },
            ],
            nodeSelector: { disk: 'ssd', zone: 'a' },
          },
          { labels: { app: 'web' }, finalizers: ['example.com/a'] },
        ),
        'A',
        { apiVersion: 'v1' },
      );
    const v1 = { apiVersion: 'v1' };

    it('atomic lists (args) are replaced whole and owned as one field', () => {
      const out = applied(base(), pod({ containers: [{ name: 'app', args: ['--c'] }] }), 'B', {
        ...v1,
        force: true,
      });
      assert.deepEqual(at(out, 'spec', 'containers', 0, 'args'), ['--c']);
      assert.ok(owners(out).B.includes('.spec.containers[name="app"].args'));
    });

    it('sets (finalizers) are unions of items; map lists (ports, two keys) merge by key', () => {
      const out = applied(
        base(),
        pod(
          { containers: [{ name: 'app', ports: [{ containerPort: 80, protocol: 'UDP' }] }] },
          { finalizers: ['example.com/b'] },
        ),
        'B',
        v1,
      );
      assert.deepEqual(at(out, 'metadata', 'finalizers'), ['example.com/a', 'example.com/b']);
      assert.deepEqual(at(out, 'spec', 'containers', 0, 'ports'), [
        { containerPort: 80, protocol: 'TCP' },
        { containerPort: 80, protocol: 'UDP' },
      ]);
    });

    it('granular maps (labels) merge; atomic maps (nodeSelector) are replaced whole', () => {
      const out = applied(base(), pod({ nodeSelector: { disk: 'hdd' } }, { labels: { tier: 'fe' } }), 'B', {
        ...v1,
        force: true,
      });
      assert.deepEqual(at(out, 'metadata', 'labels'), { app: 'web', tier: 'fe' });
      assert.deepEqual(at(out, 'spec', 'nodeSelector'), { disk: 'hdd' });
      assert.deepEqual(owners(out).B, ['.metadata.labels.tier', '.spec.nodeSelector']);
    });

    it('atomic structs (a label selector) are owned whole', () => {
      const out = applied(null, deployment({ selector: { matchLabels: { app: 'x' } } }), 'A');
      assert.deepEqual(owners(out).A, ['.spec.selector']);
      const s = statusOf(() => applied(out, deployment({ selector: { matchExpressions: [] } }), 'B'));
      assert.equal(s.message, 'Apply failed with 1 conflict: conflict with "A": .spec.selector');
    });

    it('patchStrategy merge without a list type reads as a map list keyed by the merge key, else lists are atomic', () => {
      const merged = fieldNode({
        type: 'array',
        items: { type: 'object' },
        patchStrategy: 'merge',
        patchMergeKey: 'name',
      });
      assert.ok(merged.kind === 'list' && merged.listType === 'map');
      assert.deepEqual(merged.kind === 'list' && merged.keys, ['name']);
      const set = fieldNode({ type: 'array', items: { type: 'string' }, patchStrategy: 'merge' });
      assert.ok(set.kind === 'list' && set.listType === 'set');
      const plain = fieldNode({ type: 'array', items: { type: 'string' } });
      assert.ok(plain.kind === 'list' && plain.listType === 'atomic');
    });

    it('without a schema, lists are atomic and object keys are fields', () => {
      const cr = (spec: JSONObject) => ({
        apiVersion: 'example.com/v1',
        kind: 'Thing',
        metadata: { name: 't' },
        spec,
      });
      const model = UNSTRUCTURED_WITH_METADATA;
      const live = applied(null, cr({ list: [{ name: 'a' }, { name: 'b' }], m: { x: 1 } }), 'A', { model });
      assert.deepEqual(owners(live).A, ['.spec', '.spec.list', '.spec.m', '.spec.m.x']);
      const out = applied(live, cr({ list: [{ name: 'c' }], m: { y: 2 } }), 'B', { model, force: true });
      assert.deepEqual(out.spec, { list: [{ name: 'c' }], m: { x: 1, y: 2 } });
    });
  });

  describe('9. resetting managedFields with [{}]', () => {
    const live = () =>
      applied(null, configMap({ key: 'value' }, { labels: { 'test-label': 'test' } }), 'apply_test', {
        apiVersion: 'v1',
      });
    const v1 = { apiVersion: 'v1' };

    it('a merge patch with [{}] clears them', () => {
      const out = applyPatch(
        'merge',
        live(),
        '{"metadata":{"managedFields":[{}]}}',
        ctx({ ...v1, manager: 'x' }),
      );
      assert.equal(at(out, 'metadata', 'managedFields'), undefined);
      assert.deepEqual(at(out, 'metadata', 'labels'), { 'test-label': 'test' });
    });

    it('a JSON patch replacing them with [{}] clears them', () => {
      const body = '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]';
      assert.equal(
        at(applyPatch('json', live(), body, ctx({ ...v1, manager: 'x' })), 'metadata', 'managedFields'),
        undefined,
      );
    });

    it('with other changes, the reset comes first and the writer owns what it changed', () => {
      const out = applyPatch(
        'strategic',
        live(),
        '{"metadata":{"managedFields":[{}],"labels":{"new":"1"}}}',
        ctx({ ...v1, manager: 'editor' }),
      );
      assert.deepEqual(owners(out), { 'editor:Update': ['.metadata.labels.new'] });
    });

    it('an empty list does not reset them', () => {
      const out = applyPatch(
        'merge',
        live(),
        '{"metadata":{"managedFields":[]}}',
        ctx({ ...v1, manager: 'x' }),
      );
      assert.deepEqual(Object.keys(owners(out)), ['apply_test']);
    });
  });

  it("10. subresource writes keep the object's own entries and record the subresource", () => {
    const live = applied(null, deployment({ replicas: 1 }), 'kubectl');
    const next = structuredClone(live);
    (next.spec as JSONObject).replicas = 4;
    (next.metadata as JSONObject).managedFields = [
      { manager: 'forged', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: {} },
    ];
    const out = updated(live, next, 'hpa', { subresource: 'scale' });
    assert.deepEqual(owners(out), { 'hpa:Update/scale': ['.spec.replicas'] });
    assert.equal(at(out, 'metadata', 'managedFields', 0, 'subresource'), 'scale');
  });
});
