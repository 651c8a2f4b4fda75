// Per-kind rules with Kubernetes' exact paths, types and messages.
import assert from 'node:assert/strict';
import { applyDefaults } from '../defaults';
import { fieldErrorMessage } from '../field-errors';
import { validateObject, validateObjectUpdate } from './index';

type O = Record<string, unknown>;
const check = (o: O) => validateObject(applyDefaults(structuredClone(o))).map(fieldErrorMessage);
const checkUpdate = (o: O, old: O) =>
  validateObjectUpdate(applyDefaults(structuredClone(o)), applyDefaults(structuredClone(old))).map(
    fieldErrorMessage,
  );
const meta = (name = 'x', namespace: string | null = 'default') =>
  namespace ? { name, namespace } : { name };
const pod = (spec: O) => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta(), spec });
const ctr = (extra: O = {}) => ({ name: 'c', image: 'nginx', ...extra });

describe('core kinds', () => {
  const svc = (spec: O, name = 'web') => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec });
  it('Service: ports, names, type, clusterIP None, nodePort', () => {
    assert.deepEqual(check(svc({ ports: [{ port: 80 }, { port: 0, name: 'b' }] })), [
      'spec.ports[0].name: Required value',
      'spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      // targetPort defaults to the port, so it is reported too, as Kubernetes does.
      'spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    ]);
    assert.deepEqual(check(svc({ type: 'Magic', ports: [{ port: 80 }] })), [
      'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ]);
    assert.deepEqual(check(svc({ type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] })), [
      `spec.clusterIP: Invalid value: "None": may not be set to 'None' for NodePort services`,
    ]);
    assert.deepEqual(check(svc({ ports: [{ port: 80, nodePort: 30000 }] })), [
      "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ]);
    assert.deepEqual(
      check(
        svc({
          ports: [
            { name: 'a', port: 80 },
            { name: 'b', port: 80 },
          ],
        }),
      ),
      ['spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}'],
    );
    assert.deepEqual(check(svc({ clusterIP: 'None' })), []);
    assert.deepEqual(check(svc({ type: 'ExternalName' })), ['spec.externalName: Required value']);
  });

  it('Service: clusterIPs may not change once set', () => {
    const old = svc({ clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'], ports: [{ port: 80 }] });
    const now = {
      ...svc({ clusterIP: '10.0.0.2', clusterIPs: ['10.0.0.2'], ports: [{ port: 80 }] }),
      metadata: { ...meta('web'), resourceVersion: '2' },
    };
    assert.deepEqual(checkUpdate(now, old), [
      'spec.clusterIPs[0]: Invalid value: "10.0.0.2": may not change once set',
    ]);
  });

  it('ConfigMap and Secret keys, sizes, types, immutability', () => {
    assert.deepEqual(check({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { 'a b': '1' } }), [
      `data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ]);
    assert.deepEqual(
      check({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta(),
        data: { a: 'x'.repeat(1024 * 1024 + 1) },
      }),
      [': Too long: must have at most 1048576 bytes'],
    );
    assert.deepEqual(
      check({ apiVersion: 'v1', kind: 'Secret', metadata: meta(), type: 'kubernetes.io/tls', data: {} }),
      ['data[tls.crt]: Required value', 'data[tls.key]: Required value'],
    );
    assert.deepEqual(
      check({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: meta(),
        type: 'kubernetes.io/service-account-token',
      }),
      ['metadata.annotations[kubernetes.io/service-account.name]: Required value'],
    );
    assert.deepEqual(
      check({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: meta(),
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from('{x').toString('base64') },
      })[0].slice(0, 79),
      'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": Expected ',
    );
    const old = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { ...meta(), resourceVersion: '1' },
      immutable: true,
      data: { a: 'YQ==' },
    };
    assert.deepEqual(checkUpdate({ ...old, type: 'Other', data: { a: 'Yg==' } }, old), [
      'type: Invalid value: "Other": field is immutable',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('Namespace finalizers, Node taints, PVC rules', () => {
    assert.deepEqual(
      check({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: meta('ns', null),
        spec: { finalizers: ['foo'] },
      }),
      [
        'spec.finalizers: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
      ],
    );
    assert.deepEqual(
      check({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: meta('n', null),
        spec: { taints: [{ key: 'a', effect: 'Sometimes' }, { key: 'b' }] },
      }),
      [
        'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        'spec.taints[1].effect: Required value',
      ],
    );
    assert.deepEqual(check({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta(), spec: {} }), [
      'spec.accessModes: Required value: at least 1 access mode is required',
      'spec.resources[storage]: Required value',
    ]);
  });
  it('PersistentVolumeClaim: the binder may set volumeName once and a class never named; nothing else changes', () => {
    const claim = (s: O, annotations?: O) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { ...meta(), resourceVersion: '1', ...(annotations ? { annotations } : {}) },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...s },
    });
    const immutable =
      'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';
    assert.deepEqual(checkUpdate(claim({ volumeName: 'pv-1' }), claim({})), []);
    assert.deepEqual(checkUpdate(claim({ volumeName: 'pv-2' }), claim({ volumeName: 'pv-1' })), [immutable]);
    assert.deepEqual(checkUpdate(claim({ storageClassName: 'standard' }), claim({})), []);
    assert.deepEqual(checkUpdate(claim({ storageClassName: 'fast' }), claim({ storageClassName: '' })), [
      immutable,
    ]);
    assert.deepEqual(
      checkUpdate(
        claim({ storageClassName: 'fast' }, { 'volume.beta.kubernetes.io/storage-class': 'slow' }),
        claim({}, { 'volume.beta.kubernetes.io/storage-class': 'slow' }),
      ),
      [immutable],
    );
    assert.deepEqual(checkUpdate(claim({ accessModes: ['ReadWriteMany'] }), claim({})), [immutable]);
  });
});

describe('RBAC, webhooks, CRDs, CSRs, Ingress, others', () => {
  it('RBAC: roleRef and subjects; roleRef immutable', () => {
    const rb = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta('b'),
      roleRef: { kind: 'Thing', name: '' },
      subjects: [
        { kind: 'Robot', name: 'r' },
        { kind: 'User', name: 'u', apiGroup: 'x' },
      ],
    };
    assert.deepEqual(check(rb), [
      'roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      'subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
    ]);
    const good = { ...rb, roleRef: { kind: 'Role', name: 'r' }, subjects: [] };
    assert.deepEqual(
      checkUpdate(
        {
          ...good,
          metadata: { ...meta('b'), resourceVersion: '1' },
          roleRef: { kind: 'ClusterRole', name: 'r' },
        },
        good,
      ),
      [
        'roleRef: Invalid value: {"kind":"ClusterRole","name":"r","apiGroup":"rbac.authorization.k8s.io"}: cannot change roleRef',
      ],
    );
    assert.deepEqual(
      check({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta('r'),
        rules: [{ resources: ['pods'] }],
      }),
      [
        'rules[0].verbs: Required value: verbs must contain at least one value',
        'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      ],
    );
  });

  it('admission webhooks v1: sideEffects, review versions, unique names, timeouts', () => {
    const hook = (extra: O) => ({
      name: 'a.b.example.com',
      clientConfig: { url: 'https://x.example.com/' },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    });
    const vwc = (webhooks: O[]) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: meta('w', null),
      webhooks,
    });
    assert.deepEqual(
      check(
        vwc([
          hook({ sideEffects: undefined, admissionReviewVersions: [] }),
          hook({ sideEffects: 'Some', timeoutSeconds: 31 }),
          hook({ name: 'short' }),
        ]),
      ),
      [
        'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
        'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
        'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        'webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
        'webhooks[1].name: Duplicate value: "a.b.example.com"',
        'webhooks[2].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      ],
    );
    assert.deepEqual(check(vwc([hook({ clientConfig: { url: 'http://x.example.com/?a=1' } })])), [
      'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
      'webhooks[0].clientConfig.url: Invalid value: "a=1": query parameters are not permitted in the URL',
    ]);
  });

  it('CRD v1: scope, schema, storage version, names', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: meta('things.example.com', null),
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          { name: 'v1', served: true, storage: true },
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'string', properties: { a: {} } } },
          },
        ],
        preserveUnknownFields: true,
      },
    };
    assert.deepEqual(check(crd), [
      'metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group',
      'spec.scope: Required value',
      'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
      'spec.versions[1].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
      'spec.versions[1].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields',
      `spec.versions: Invalid value: [{"name":"v1","served":true,"storage":true},{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"string","properties":{"a":{}}}}}]: must contain unique version names`,
      `spec.versions: Invalid value: [{"name":"v1","served":true,"storage":true},{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"string","properties":{"a":{}}}}}]: must have exactly one version marked as storage version`,
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });

  it('CSR v1: signerName and usages required, certificate PEM blocks', () => {
    const csr = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: meta('c', null),
      spec: {
        request: Buffer.from('nope').toString('base64'),
        usages: ['client auth', 'client auth', 'flying'],
      },
      status: {
        certificate: Buffer.from('-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n').toString(
          'base64',
        ),
      },
    };
    assert.deepEqual(check(csr), [
      'spec.request: Invalid value: "bm9wZQ==": PEM block type must be CERTIFICATE REQUEST',
      'spec.usages[1]: Duplicate value: "client auth"',
      'spec.signerName: Required value',
      'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"',
      'spec.usages[2]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
    ]);
  });

  it('Ingress v1: pathType required, backends', () => {
    const ing = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta('i'),
      spec: {
        rules: [
          {
            host: '*.Example.com',
            http: {
              paths: [
                { path: 'api', backend: { service: { name: 'web' } } },
                { path: 'x', pathType: 'Exact', backend: {} },
              ],
            },
          },
        ],
      },
    };
    assert.deepEqual(check(ing), [
      `spec.rules[0].host: Invalid value: "*.Example.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      'spec.rules[0].http.paths[0].backend: Required value: port name or number is required',
      'spec.rules[0].http.paths[1].path: Invalid value: "x": must be an absolute path',
      'spec.rules[0].http.paths[1].backend: Invalid value: "": resource or service backend is required',
    ]);
  });

  it('PDB, Lease, HPA, PriorityClass', () => {
    assert.deepEqual(
      check({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: meta('p'),
        spec: { minAvailable: 1, maxUnavailable: '200%' },
      }),
      [
        'spec: Invalid value: {"minAvailable":1,"maxUnavailable":"200%"}: minAvailable and maxUnavailable cannot be both set',
        'spec.maxUnavailable: Invalid value: "200%": must not be greater than 100%',
      ],
    );
    assert.deepEqual(
      check({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: meta('l'),
        spec: { leaseDurationSeconds: 0, leaseTransitions: -1 },
      }),
      [
        'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
        'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
      ],
    );
    assert.deepEqual(
      check({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: meta('h'),
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, minReplicas: 3, maxReplicas: 2 },
      }),
      ['spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`'],
    );
    assert.deepEqual(
      check({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: meta('system-mine', null),
        value: 1,
      }),
      [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only",
      ],
    );
  });
});

describe('schema-derived errors', () => {
  it('enums and required fields from the schema, with map keys in brackets', () => {
    assert.deepEqual(
      check(
        pod({
          containers: [ctr({ imagePullPolicy: 'Sometimes', env: [{ value: 'x' }] })],
          securityContext: { seccompProfile: { type: 'Custom' } },
        }),
      ),
      [
        'spec.containers[0].env[0].name: Required value',
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
        'spec.securityContext.seccompProfile.type: Unsupported value: "Custom": supported values: "Localhost", "RuntimeDefault", "Unconfined"',
      ],
    );
  });
});

describe('virtual kinds', () => {
  it('reviews and bindings have no stored metadata to check', () => {
    const ssar = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    };
    assert.deepEqual(check(ssar), []);
    assert.deepEqual(check({ ...ssar, spec: {} }), [
      'spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    ]);
    assert.deepEqual(
      check({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Pod' } }),
      [
        'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
        'target.name: Required value',
      ],
    );
  });
});

describe('objects the apiserver builds itself', () => {
  it('skip the schema type check and keep the semantic rules', () => {
    // restartPolicy's enum is a schema rule; the container name is a semantic one.
    const bad = applyDefaults(
      structuredClone(pod({ restartPolicy: 'Sometimes', containers: [ctr({ name: 'Bad_Name' })] })),
    );
    const full = validateObject(bad).map(fieldErrorMessage);
    assert.ok(
      full.some((m) => m.startsWith('spec.restartPolicy: Unsupported value')),
      full.join('\n'),
    );
    const internal = validateObject(bad, { schema: false }).map(fieldErrorMessage);
    assert.ok(!internal.some((m) => m.startsWith('spec.restartPolicy')), internal.join('\n'));
    assert.ok(
      internal.some((m) => m.startsWith('spec.containers[0].name: Invalid value')),
      internal.join('\n'),
    );
  });
});
