// The registry's validation of MutatingAdmissionPolicy (mutating-policy-strategy.ts)
// over real HTTPS: 422 Invalid with Kubernetes' field paths and details.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';

const ADM = '/apis/admissionregistration.k8s.io/v1';

const policy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingAdmissionPolicy',
  metadata: { name },
  spec: {
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
      ],
    },
    reinvocationPolicy: 'Never',
    ...spec,
  },
});
const jsonPatch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const applyConfig = (expression: string) => ({
  patchType: 'ApplyConfiguration',
  applyConfiguration: { expression },
});
const addLabel = (key: string, value: string) =>
  jsonPatch(
    `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("${key}"), value: ${value}}]`,
  );

describe('MutatingAdmissionPolicy validation', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
  });

  it('accepts a valid policy and binding, and refuses a binding without policyName', async () => {
    const ok = await api('POST', `${ADM}/mutatingadmissionpolicies`, {
      body: policy('valid', { mutations: [addLabel('a', '"b"'), applyConfig('Object{data: {"x": "y"}}')] }),
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    const b = await api('POST', `${ADM}/mutatingadmissionpolicybindings`, {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingAdmissionPolicyBinding',
        metadata: { name: 'nameless' },
        spec: {},
      },
    });
    assert.equal(b.status, 422, JSON.stringify(b.json));
    assert.equal(
      b.json.message,
      'MutatingAdmissionPolicyBinding.admissionregistration.k8s.io "nameless" is invalid: spec.policyName: Required value',
    );
  });

  it('refuses policies Kubernetes refuses, with its field paths', async () => {
    const bad = policy('invalid', {
      mutations: [
        { patchType: 'Merge' },
        { patchType: 'JSONPatch', applyConfiguration: { expression: 'Object{}' } },
        jsonPatch('object.'),
        jsonPatch('"text"'),
        applyConfig('{"a": 1}'),
      ],
      matchConditions: [{ name: 'x', expression: 'nope == 1' }],
    });
    const r = await api('POST', `${ADM}/mutatingadmissionpolicies`, { body: bad });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(r.json.reason, 'Invalid');
    const causes: string[] = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    const has = (prefix: string) =>
      assert.ok(
        causes.some((c) => c.startsWith(prefix)),
        `${prefix}\n---\n${causes.join('\n')}`,
      );
    has(
      'spec.mutations[0].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"',
    );
    has('spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch');
    has('spec.mutations[1].applyConfiguration: Forbidden: must not be specified when patchType is JSONPatch');
    has(
      'spec.mutations[2].jsonPatch.expression: Invalid value: "object.": compilation failed: ERROR: <input>:1:8:',
    );
    has(
      'spec.mutations[3].jsonPatch.expression: Invalid value: "\\"text\\"": must evaluate to list(JSONPatch) but got string',
    );
    has(
      'spec.mutations[4].applyConfiguration.expression: Invalid value: "{\\"a\\": 1}": must evaluate to Object but got map(string, int)',
    );
    has(
      'spec.matchConditions[0].expression: Invalid value: "nope == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'nope\'',
    );

    const none = await api('POST', `${ADM}/mutatingadmissionpolicies`, {
      body: {
        ...policy('no-mutations', {}),
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
            ],
          },
        },
      },
    });
    assert.equal(none.status, 422, JSON.stringify(none.json));
    assert.match(
      none.json.message,
      /spec\.mutations: Required value: mutations must contain at least one item/,
    );
    assert.match(none.json.message, /spec\.reinvocationPolicy: Required value/);
    assert.match(
      none.json.message,
      /spec\.matchConstraints\.resourceRules\[0\]\.operations\[0\]: Unsupported value: "DELETE"/,
    );
    const unmatched = await api('POST', `${ADM}/mutatingadmissionpolicies`, {
      body: {
        ...policy('no-match', {}),
        spec: { reinvocationPolicy: 'Never', mutations: [addLabel('a', '"b"')] },
      },
    });
    assert.equal(unmatched.status, 422, JSON.stringify(unmatched.json));
    assert.equal(
      unmatched.json.message,
      'MutatingAdmissionPolicy.admissionregistration.k8s.io "no-match" is invalid: spec.matchConstraints: Required value',
    );
  });
});
