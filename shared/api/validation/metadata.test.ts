import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field-errors';
import { invalid as invalidStatus } from '../status';
import { validateObject, validateObjectUpdate } from './index';
import { selectorMatches } from './metadata';

const msgs = (o: Record<string, unknown>) => validateObject(o).map(fieldErrorMessage);
const cm = (metadata: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata });
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('ObjectMeta', () => {
  it('name is required unless generated; names follow the kind rule', () => {
    assert.deepEqual(msgs(cm({ namespace: 'default' })), [
      'metadata.name: Required value: name or generateName is required',
    ]);
    assert.deepEqual(msgs(cm({ name: 'Bad', namespace: 'default' })), [
      `metadata.name: Invalid value: "Bad": ${SUBDOMAIN}`,
    ]);
    assert.deepEqual(msgs(cm({ name: 'a', generateName: 'Web-', namespace: 'default' })), [
      `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN}`,
    ]);
  });

  it('kinds with other name rules: Namespace (label), Service (DNS-1035), RBAC (path segment)', () => {
    assert.deepEqual(msgs({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } }), [
      'metadata.name: Invalid value: "a.b": must not contain dots',
    ]);
    assert.match(
      msgs({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: '1svc', namespace: 'd' },
        spec: { type: 'ClusterIP', sessionAffinity: 'None', ports: [{ port: 80, protocol: 'TCP' }] },
      })[0],
      /^metadata\.name: Invalid value: "1svc": a DNS-1035 label must consist of/,
    );
    assert.deepEqual(
      msgs({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'system:Admin/x' },
      }),
      ['metadata.name: Invalid value: "system:Admin/x": may not contain \'/\''],
    );
  });

  it('namespace required for namespaced kinds, forbidden for cluster-scoped ones', () => {
    assert.deepEqual(msgs(cm({ name: 'a' })), ['metadata.namespace: Required value']);
    assert.deepEqual(msgs({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', namespace: 'b' } }), [
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });

  it('labels, annotations, finalizers, owner references', () => {
    const errs = msgs(
      cm({
        name: 'a',
        namespace: 'd',
        labels: { 'app.kubernetes.io/name': 'x'.repeat(64), 'bad key': 'v' },
        annotations: { 'Example.com/Key': 'ok', big: 'x'.repeat(256 * 1024) },
        finalizers: ['example.com/cleanup', 'foo', 'orphan', 'foregroundDeletion'],
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: '', uid: '', controller: true },
        ],
      }),
    );
    assert.deepEqual(errs, [
      'metadata.labels: Invalid value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": must be no more than 63 characters',
      `metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      'metadata.annotations: Too long: must have at most 262144 bytes',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
      'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u1","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"","uid":"","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs and ReplicaSet/',
      'metadata.finalizers: Invalid value: ["example.com/cleanup","foo","orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      'metadata.finalizers[1]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('update: immutable identity, resourceVersion required, no new finalizers while deleting', () => {
    const old = {
      ...cm({
        name: 'a',
        namespace: 'd',
        uid: 'u',
        resourceVersion: '1',
        deletionTimestamp: '2024-05-01T10:00:00Z',
        finalizers: ['example.com/a'],
      }),
    };
    const now = cm({
      name: 'b',
      namespace: 'd',
      uid: 'u2',
      finalizers: ['example.com/a', 'example.com/b'],
      deletionTimestamp: '2024-05-01T10:00:00Z',
    });
    assert.deepEqual(validateObjectUpdate(now, old).map(fieldErrorMessage), [
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}',
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
    ]);
  });

  it('the caller turns errors into the 422 Kubernetes sends', () => {
    const errs = validateObject(cm({ name: 'Bad', namespace: 'default' }));
    const st = invalidStatus({ group: '', kind: 'ConfigMap' }, 'Bad', errs);
    assert.equal(st.code, 422);
    assert.equal(st.message, `ConfigMap "Bad" is invalid: metadata.name: Invalid value: "Bad": ${SUBDOMAIN}`);
  });
});

describe('label selectors', () => {
  it('match like Kubernetes (nil matches nothing, empty everything)', () => {
    const labels = { app: 'web', tier: 'front' };
    assert.equal(selectorMatches(undefined, labels), false);
    assert.equal(selectorMatches({}, labels), true);
    assert.equal(
      selectorMatches(
        {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }],
        },
        labels,
      ),
      true,
    );
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, labels),
      true,
    );
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels),
      false,
    );
  });
});
