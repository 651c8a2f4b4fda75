// The handler-facing entry points: content types, options, bodies, and the order of steps.
import assert from 'node:assert/strict';
import { StatusError } from '../../shared/api/status';
import {
  applyPatch,
  managerFromUserAgent,
  parseApplyBody,
  patchKindOf,
  resetFieldsFor,
  validatePatchOptions,
  validateWriteOptions,
  type PatchContext,
} from './index';
import type { JSONObject } from './json-util';
import { applied, at, owners, pod, stored } from './fieldmanager/fixtures';

const statusOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return e.status;
  }
  assert.fail('expected a StatusError');
};

describe('apply entry points', () => {
  it('maps content types to patch kinds, with 415 for what the resource does not take', () => {
    assert.equal(patchKindOf('application/merge-patch+json', true), 'merge');
    assert.equal(patchKindOf('application/json-patch+json; charset=UTF-8', false), 'json');
    assert.equal(patchKindOf('application/strategic-merge-patch+json', true), 'strategic');
    const s = statusOf(() => patchKindOf('application/strategic-merge-patch+json', false));
    assert.equal(s.code, 415);
    assert.equal(s.details, undefined);
    assert.equal(statusOf(() => patchKindOf('application/json', true)).code, 415);
  });

  it('derives the field manager from the user agent like kube-apiserver', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.30.2 (linux/amd64) kubernetes/3968350'), 'kubectl');
    assert.equal(
      managerFromUserAgent('kube-controller-manager/v1.30.0 (linux/amd64) kubernetes/x/leader-election'),
      'kube-controller-manager',
    );
    assert.equal(managerFromUserAgent('my\u0007agent'), 'myagent');
    assert.equal(managerFromUserAgent('x'.repeat(200)), 'x'.repeat(128));
    assert.equal(managerFromUserAgent(undefined), '');
    // Remembered per user agent, and right again once many others pushed it out.
    for (let i = 0; i < 600; i++) assert.equal(managerFromUserAgent(`agent-${i}/v1`), `agent-${i}`);
    assert.equal(managerFromUserAgent('kubectl/v1.30.2 (linux/amd64) kubernetes/3968350'), 'kubectl');
    assert.equal(managerFromUserAgent('my\u0007agent'), 'myagent');
  });

  it('validates fieldManager like ValidatePatchOptions / ValidateCreateOptions', () => {
    assert.doesNotThrow(() => validatePatchOptions('merge', { manager: 'm' }));
    const long = statusOf(() => validateWriteOptions('CreateOptions', 'x'.repeat(129)));
    assert.equal(long.code, 422);
    assert.match(long.message ?? '', /^CreateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long: /);
    const bad = statusOf(() => validatePatchOptions('merge', { manager: 'a\tb' }));
    assert.equal(
      bad.message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)',
    );
  });

  it('decodes apply bodies as YAML 1.1 (JSON included) holding one object', () => {
    assert.deepEqual(parseApplyBody('a: yes\nb: "on"\nc: 2024-05-01\nd: 0777\n'), {
      a: true,
      b: 'on',
      c: '2024-05-01',
      d: 511,
    });
    assert.deepEqual(parseApplyBody('{"a":1}'), { a: 1 });
    assert.deepEqual(parseApplyBody(''), {});
    assert.equal(statusOf(() => parseApplyBody('- a\n- b\n')).code, 400);
    assert.equal(statusOf(() => parseApplyBody('a: [\n')).code, 400);
  });

  describe('applyPatch', () => {
    const v1 = (o: Partial<PatchContext> = {}): PatchContext => ({
      apiVersion: 'v1',
      now: new Date('2024-05-01T10:00:00Z'),
      ...o,
    });
    const live = () =>
      applied(null, pod({ containers: [{ name: 'app', image: 'app:1' }] }), 'kubectl', { apiVersion: 'v1' });

    it('defaults before recording ownership, so a patcher owns the defaults it brings', () => {
      const defaulter = (o: JSONObject) => {
        for (const c of at(o, 'spec', 'containers') as JSONObject[]) c.imagePullPolicy ??= 'IfNotPresent';
      };
      const body = '{"spec":{"containers":[{"name":"side","image":"side:1"}]}}';
      const out = applyPatch('strategic', live(), body, v1({ manager: 'injector', defaulter }));
      assert.ok(owners(out)['injector:Update'].includes('.spec.containers[name="side"].imagePullPolicy'));
      assert.equal(at(out, 'spec', 'containers', 0, 'imagePullPolicy'), 'IfNotPresent');
    });

    it('does not modify the live object', () => {
      const l = live();
      const before = JSON.stringify(l);
      applyPatch('merge', l, '{"metadata":{"labels":{"a":"b"}}}', v1({ manager: 'x' }));
      applyPatch(
        'json',
        l,
        '[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]',
        v1({ manager: 'x' }),
      );
      applyPatch('strategic', l, '{"metadata":{"labels":{"a":"b"}}}', v1({ manager: 'x' }));
      applyPatch(
        'apply',
        l,
        pod({ containers: [{ name: 'app', image: 'app:2' }] }),
        v1({ manager: 'kubectl' }),
      );
      assert.equal(JSON.stringify(l), before);
    });

    it('answers 415 for strategic merge on custom resources', () => {
      const cr = stored({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: {} });
      const s = statusOf(() =>
        applyPatch('strategic', cr, '{}', { apiVersion: 'example.com/v1', manager: 'x' }),
      );
      assert.equal(s.code, 415);
    });

    it('answers 422 when a merge patch turns the object into something else', () => {
      const s = statusOf(() => applyPatch('merge', live(), '[1]', v1({ manager: 'x' })));
      assert.equal(s.code, 422);
      assert.match(
        s.message ?? '',
        /^ "" is invalid: patch: Invalid value: "\[1\]": json: cannot unmarshal array/,
      );
    });

    it('applies to /status with the status reset fields', () => {
      const resetFields = resetFieldsFor(
        { group: '', resource: 'pods', hasStatusSubresource: true },
        'status',
      );
      const body = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: { nodeName: 'n1' },
        status: { phase: 'Running' },
      };
      const out = applyPatch(
        'apply',
        live(),
        body,
        v1({ manager: 'kubelet', subresource: 'status', resetFields }),
      );
      assert.deepEqual(owners(out)['kubelet/status'], ['.status.phase']);
      const entries = at(out, 'metadata', 'managedFields') as JSONObject[];
      assert.deepEqual(
        entries.map((e) => [e.manager, e.operation, e.subresource]),
        [
          ['kubectl', 'Apply', undefined],
          ['kubelet', 'Apply', 'status'],
        ],
      );
    });
  });
});
