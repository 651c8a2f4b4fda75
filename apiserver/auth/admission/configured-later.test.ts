// Admission configured on a running apiserver: each of the four kinds of
// configuration (ValidatingAdmissionPolicy, MutatingAdmissionPolicy, validating
// and mutating webhooks) is created after the server has served writes with
// none configured, and selects requests by a namespaceSelector only (a
// binding's matchResources without resourceRules: every resource the policy
// matches). The next write in a selected namespace must be refused or mutated;
// one in another namespace must not.
import assert from 'node:assert/strict';
import { createCA } from '../../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { localHTTPS, untilCached, type LocalHTTPS } from './test-support';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const ON = 'vap-on';
const OFF = 'vap-off';
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const cm = (name: string, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data: { a: '1' },
});
const CREATE_CONFIGMAPS = [
  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
];
const SELECT_ON = { matchLabels: { vap: 'on' } };

describe('admission configured after the apiserver has served writes', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let hook: LocalHTTPS;
  const reviews: any[] = [];
  let respond: (req: any) => any = (req) => ({ uid: req.uid, allowed: true });

  const create = async (path: string, body: any) => {
    const r = await api('POST', path, { body });
    assert.equal(r.status, 201, r.body.toString());
    return r.json;
  };
  /** Creates a configuration, waits until admission can see it; returns its removal. */
  const configure = async (resource: string, body: any) => {
    await create(`${ADM}/${resource}`, body);
    await untilCached(api, `${ADM}/${resource}`, body.metadata.name);
    return async () => {
      await api('DELETE', `${ADM}/${resource}/${body.metadata.name}`);
      await untilCached(api, `${ADM}/${resource}`, body.metadata.name, false);
    };
  };
  const webhookConfig = (kind: 'Mutating' | 'Validating', name: string) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name,
        clientConfig: { url: `${hook.url}/${name}`, caBundle: hook.caBundle },
        rules: CREATE_CONFIGMAPS,
        namespaceSelector: SELECT_ON,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
      },
    ],
  });

  before(async () => {
    hook = await localHTTPS(await createCA('webhook-ca'), async (body) => {
      reviews.push(body.request);
      return {
        body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: respond(body.request) },
      };
    });
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    // Writes with nothing configured: admission has read (and kept) its empty configuration.
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OFF } });
    await create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ON, labels: { vap: 'on' } },
    });
    for (const ns of [ON, OFF]) for (const name of ['w1', 'w2', 'w3']) await create(cms(ns), cm(name));
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
    await hook?.close();
  });
  beforeEach(() => {
    reviews.length = 0;
    respond = (req) => ({ uid: req.uid, allowed: true });
  });

  it('ValidatingAdmissionPolicy: a param-less policy denies with its message (422 Invalid)', async () => {
    const removePolicy = await configure('validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'require-team' },
      spec: {
        matchConstraints: { resourceRules: CREATE_CONFIGMAPS },
        validations: [
          {
            expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
            message: 'configmaps need a team label',
          },
        ],
      },
    });
    const removeBinding = await configure('validatingadmissionpolicybindings', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'require-team-binding' },
      spec: {
        policyName: 'require-team',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: SELECT_ON },
      },
    });
    try {
      const r = await api('POST', cms(ON), { body: cm('nolabel') });
      assert.equal(r.status, 422, r.body.toString());
      const denied =
        "ValidatingAdmissionPolicy 'require-team' with binding 'require-team-binding' denied request: configmaps need a team label";
      assert.equal(r.json.kind, 'Status');
      assert.equal(r.json.reason, 'Invalid');
      assert.equal(r.json.message, `configmaps "nolabel" is forbidden: ${denied}`);
      assert.equal(r.json.details.name, 'nolabel');
      assert.equal(r.json.details.kind, 'configmaps');
      assert.deepEqual(r.json.details.causes, [{ message: denied }]);
      await create(cms(ON), cm('labelled', { team: 'a' }));
      await create(cms(OFF), cm('nolabel'));
    } finally {
      await removeBinding();
      await removePolicy();
    }
  });

  it('MutatingAdmissionPolicy: a param-less policy mutates the next write', async () => {
    const removePolicy = await configure('mutatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'add-label' },
      spec: {
        matchConstraints: { resourceRules: CREATE_CONFIGMAPS },
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression: 'Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}',
            },
          },
        ],
      },
    });
    const removeBinding = await configure('mutatingadmissionpolicybindings', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'add-label-binding' },
      spec: { policyName: 'add-label', matchResources: { namespaceSelector: SELECT_ON } },
    });
    try {
      const on = await create(cms(ON), cm('mutated'));
      assert.equal(on.metadata.labels?.['mutated-by'], 'policy');
      const off = await create(cms(OFF), cm('mutated'));
      assert.equal(off.metadata.labels?.['mutated-by'], undefined);
    } finally {
      await removeBinding();
      await removePolicy();
    }
  });

  it('ValidatingWebhookConfiguration: the webhook at its url is called and its denial refuses the write', async () => {
    const remove = await configure(
      'validatingwebhookconfigurations',
      webhookConfig('Validating', 'deny.example.com'),
    );
    respond = (req) => ({ uid: req.uid, allowed: false, status: { code: 403, message: 'no team label' } });
    try {
      const r = await api('POST', cms(ON), { body: cm('refused') });
      assert.equal(r.status, 403, r.body.toString());
      assert.equal(r.json.message, 'admission webhook "deny.example.com" denied the request: no team label');
      assert.deepEqual(
        reviews.map((q) => [q.operation, q.namespace, q.name]),
        [['CREATE', ON, 'refused']],
      );
      await create(cms(OFF), cm('refused'));
      assert.equal(reviews.length, 1);
    } finally {
      await remove();
    }
  });

  it('MutatingWebhookConfiguration: the webhook at its url is called and its patch applied', async () => {
    const remove = await configure(
      'mutatingwebhookconfigurations',
      webhookConfig('Mutating', 'mutate.example.com'),
    );
    respond = (req) => ({
      uid: req.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(
        JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { 'mutated-by': 'webhook' } }]),
      ).toString('base64'),
    });
    try {
      const on = await create(cms(ON), cm('hooked'));
      assert.equal(on.metadata.labels?.['mutated-by'], 'webhook');
      assert.deepEqual(
        reviews.map((q) => [q.operation, q.namespace, q.name]),
        [['CREATE', ON, 'hooked']],
      );
      const off = await create(cms(OFF), cm('hooked'));
      assert.equal(off.metadata.labels?.['mutated-by'], undefined);
      assert.equal(reviews.length, 1);
    } finally {
      await remove();
    }
  });
});
