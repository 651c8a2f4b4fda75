// The installed kubectl against a real apiserver process with
// CustomResourceValidationExpressions on: a CRD's CEL rules refuse a
// violating object, make a field immutable, render a messageExpression, and a
// rule over the cost budget refuses the CRD itself. A controller manager
// process runs the ValidatingAdmissionPolicy status controller, whose
// status.typeChecking kubectl shows. A MutatingAdmissionPolicy applied with
// kubectl mutates the ConfigMaps kubectl creates.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import {
  startAPIServerProcess,
  startProcess,
  tempDir,
  type APIServerProc,
  type Proc,
} from './support/processes';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: scalers.cel.example.com
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: scalers, singular: scaler, kind: Scaler}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.minReplicas <= self.replicas
              messageExpression: "'replicas ' + string(self.replicas) + ' is below minReplicas ' + string(self.minReplicas)"
            properties:
              replicas: {type: integer}
              minReplicas: {type: integer}
              storageClass:
                type: string
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: storageClass is immutable
`;

const scaler = (replicas: number, min: number, storageClass = 'fast') => `apiVersion: cel.example.com/v1
kind: Scaler
metadata:
  name: web
spec:
  replicas: ${replicas}
  minReplicas: ${min}
  storageClass: ${storageClass}
`;

const EXPENSIVE = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: costlies.cel.example.com
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: costlies, singular: costly, kind: Costly}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              names:
                type: array
                items: {type: string}
                x-kubernetes-validations:
                - rule: self.all(a, self.all(b, a == b))
`;

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: require-owner
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  matchConditions:
  - name: skip-params
    expression: "object.metadata.name != 'policy-params'"
  validations:
  - expression: "has(object.metadata.labels) && params.data.label in object.metadata.labels"
    messageExpression: "'label ' + params.data.label + ' is required'"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: policy-params, namespace: default}
data: {label: owner}
`;

const binding = (action: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: require-owner-binding
spec:
  policyName: require-owner
  validationActions: [${action}]
  paramRef: {name: policy-params, namespace: default, parameterNotFoundAction: Deny}
`;

const MUTATING_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: stamp-configmaps
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        has(object.metadata.labels)
        ? [JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/stamped"), value: "yes"}]
        : [JSONPatch{op: "add", path: "/metadata/labels", value: {"example.com/stamped": "yes"}}]
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{data: {"stamp": object.metadata.name}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: stamp-configmaps-binding
spec:
  policyName: stamp-configmaps
`;

describe('kubectl with CEL validation rules', function () {
  this.timeout(180_000);
  let srv: APIServerProc;
  let kcm: Proc;
  let cacheDir: string;
  const run = (args: string[], input?: string) =>
    kubectl(srv.kubeconfig, ['--cache-dir', cacheDir, ...args], { input });

  before(async function () {
    if (!kubectlAvailable()) {
      console.warn('kubectl not found on PATH: skipping the kubectl CEL tests');
      this.skip();
    }
    cacheDir = tempDir('kubectl-cache');
    srv = await startAPIServerProcess({
      args: ['--feature-gates', 'CustomResourceValidationExpressions=true'],
    });
    kcm = startProcess(
      'controller-manager',
      [
        '--kubeconfig',
        srv.kubeconfig,
        '--secure-port=0',
        '--leader-elect=false',
        '--controllers=validatingadmissionpolicy-status-controller',
      ],
      cacheDir,
    );
    const r = await run(['apply', '-f', '-'], CRD);
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(async () => (await run(['get', 'scalers'])).code === 0, 10_000, 'scalers served');
  });
  after(async () => {
    await kcm?.stop();
    await srv?.cleanup();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('refuses an object breaking self.minReplicas <= self.replicas, with the rendered messageExpression', async () => {
    const r = await run(['apply', '-f', '-'], scaler(1, 3));
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /The Scaler "web" is invalid: spec: Invalid value: "object": replicas 1 is below minReplicas 3/,
    );
    const ok = await run(['apply', '-f', '-'], scaler(3, 1));
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('keeps a field immutable with self == oldSelf', async () => {
    const r = await run(['apply', '-f', '-'], scaler(3, 1, 'slow'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.storageClass: Invalid value: "string": storageClass is immutable/);
    const ok = await run(['apply', '-f', '-'], scaler(4, 1, 'fast'));
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('refuses a CRD whose rule is over the estimated cost budget', async () => {
    const r = await run(['apply', '-f', '-'], EXPENSIVE);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[names\]\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/,
    );
  });

  it('a ValidatingAdmissionPolicy with a param object denies (Deny) and warns (Warn)', async () => {
    let r = await run(['apply', '-f', '-'], POLICY);
    assert.equal(r.code, 0, r.stderr);
    r = await run(['apply', '-f', '-'], binding('Deny'));
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => (await run(['create', 'configmap', 'probe', '--dry-run=server'])).code !== 0,
      10_000,
      'the binding in force',
    );
    r = await run(['create', 'configmap', 'plain']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /configmaps "plain" is forbidden: ValidatingAdmissionPolicy 'require-owner' with binding 'require-owner-binding' denied request: label owner is required/,
    );
    r = await run(['apply', '-f', '-'], binding('Warn'));
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => (await run(['create', 'configmap', 'probe', '--dry-run=server'])).code === 0,
      10_000,
      'the Warn binding in force',
    );
    r = await run(['create', 'configmap', 'plain']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /Warning: Validation failed for ValidatingAdmissionPolicy 'require-owner' with binding 'require-owner-binding': label owner is required/,
    );
  });

  it('shows the status.typeChecking the controller manager writes, in kubectl get -o yaml', async () => {
    const typo = POLICY.replace('name: require-owner', 'name: typo-policy').replace(
      'params.data.label in object.metadata.labels',
      'params.data.label in object.metadata.labelz',
    );
    let r = await run(['apply', '-f', '-'], typo);
    assert.equal(r.code, 0, r.stderr);
    let yaml = '';
    await waitUntil(
      async () => {
        r = await run(['get', 'validatingadmissionpolicy', 'typo-policy', '-o', 'yaml']);
        yaml = r.stdout;
        return r.code === 0 && /observedGeneration: 1/.test(yaml);
      },
      30_000,
      'status.observedGeneration of typo-policy',
    );
    assert.match(
      yaml,
      /typeChecking:\n\s+expressionWarnings:\n\s+- fieldRef: spec\.validations\[0\]\.expression/,
    );
    assert.match(yaml, /\/v1, Kind=ConfigMap: ERROR: <input>:1:\d+: undefined field 'labelz'/);
    // A policy without type errors: no warnings.
    r = await run(['apply', '-f', '-'], POLICY);
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => {
        r = await run(['get', 'validatingadmissionpolicy', 'require-owner', '-o', 'jsonpath={.status}']);
        return r.code === 0 && r.stdout.includes('observedGeneration');
      },
      30_000,
      'status.observedGeneration of require-owner',
    );
    assert.equal(r.code, 0, r.stderr);
    const status = JSON.parse(r.stdout);
    assert.equal(status.observedGeneration, 1);
    assert.deepEqual(status.typeChecking, {});
  });

  it('a MutatingAdmissionPolicy applied with kubectl mutates the ConfigMaps kubectl creates', async () => {
    let r = await run(['apply', '-f', '-'], MUTATING_POLICY);
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => {
        const probe = await run(['create', 'configmap', 'probe', '--dry-run=server', '-o', 'yaml']);
        return probe.code === 0 && probe.stdout.includes('example.com/stamped');
      },
      10_000,
      'the mutating binding in force',
    );
    r = await run(['create', 'configmap', 'stamped', '--from-literal=a=1']);
    assert.equal(r.code, 0, r.stderr);
    r = await run(['get', 'configmap', 'stamped', '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /labels:\n\s+example\.com\/stamped: "yes"/);
    assert.match(r.stdout, /data:\n\s+a: "1"\n\s+stamp: stamped/);
  });
});
