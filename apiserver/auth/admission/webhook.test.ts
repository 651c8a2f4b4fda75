// Admission webhooks against a local HTTPS webhook server (caBundle):
// AdmissionReview v1 contents, JSONPatch mutation, denial, selectors,
// failurePolicy, timeouts and sideEffects with dry-run, reinvocation.
import assert from 'node:assert/strict';
import { createCA } from '../../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { localHTTPS, type LocalHTTPS } from './test-support';

describe('admission webhooks', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let hook: LocalHTTPS;
  const reviews: any[] = [];
  let behaviour: (req: any) => any = (req) => ({ uid: req.uid, allowed: true });

  const cms = '/api/v1/namespaces/default/configmaps';
  const cm = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels },
    data: { a: '1' },
  });

  const config = (kind: 'Mutating' | 'Validating', name: string, webhook: any) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['configmaps'],
          },
        ],
        ...webhook,
        clientConfig: webhook.clientConfig ?? { url: `${hook.url}/${name}`, caBundle: hook.caBundle },
      },
    ],
  });
  const install = async (kind: 'Mutating' | 'Validating', name: string, webhook: any) => {
    const path = `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}webhookconfigurations`;
    const r = await api('POST', path, { body: config(kind, name, webhook) });
    assert.equal(r.status, 201, r.body.toString());
    // The configurations are read through the watch cache.
    await new Promise((res) => setTimeout(res, 100));
    return () => api('DELETE', `${path}/${name}`);
  };

  before(async () => {
    const ca = await createCA('webhook-ca');
    hook = await localHTTPS(ca, async (body) => {
      reviews.push(body);
      const out = await behaviour(body.request);
      return { body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: out } };
    });
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
    await hook.close();
  });
  beforeEach(() => {
    reviews.length = 0;
    behaviour = (req) => ({ uid: req.uid, allowed: true });
  });

  it('sends an AdmissionReview v1 and applies the JSONPatch of a mutating webhook, with warnings', async () => {
    const remove = await install('Mutating', 'mutate.example.com', { name: 'mutate.example.com' });
    behaviour = (req) => ({
      uid: req.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(
        JSON.stringify([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]),
      ).toString('base64'),
      warnings: ['mutated by webhook'],
    });
    const r = await api('POST', cms, { body: cm('m1', { app: 'x' }) });
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.metadata.labels.mutated, 'yes');
    assert.equal(r.headers.warning, '299 - "mutated by webhook"');
    assert.equal(reviews.length, 1);
    const rq = reviews[0].request;
    assert.equal(reviews[0].apiVersion, 'admission.k8s.io/v1');
    assert.equal(reviews[0].kind, 'AdmissionReview');
    assert.match(rq.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(rq.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(rq.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(rq.requestKind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.equal(rq.operation, 'CREATE');
    assert.equal(rq.namespace, 'default');
    assert.equal(rq.name, 'm1');
    assert.equal(rq.userInfo.username, 'kubernetes-admin');
    assert.ok(rq.userInfo.groups.includes('system:masters'));
    assert.equal(rq.object.metadata.name, 'm1');
    assert.equal(rq.oldObject, null);
    assert.equal(rq.dryRun, false);
    assert.deepEqual(rq.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
    await remove();
  });

  it("decodes a webhook's patched object as its Go type: unknown fields dropped, wrong types a 500", async () => {
    const remove = await install('Mutating', 'decode.example.com', { name: 'decode.example.com' });
    const respond = (patch: unknown[]) => (req: any) => ({
      uid: req.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    });
    try {
      behaviour = respond([
        { op: 'add', path: '/bogus', value: 1 },
        { op: 'add', path: '/data/b', value: '2' },
      ]);
      const r = await api('POST', cms, { body: cm('dec1') });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.bogus, undefined);
      assert.deepEqual(r.json.data, { a: '1', b: '2' });
      behaviour = respond([{ op: 'add', path: '/data/n', value: 1 }]);
      const bad = await api('POST', cms, { body: cm('dec2') });
      assert.equal(bad.status, 500, bad.body.toString());
      assert.equal(
        bad.json.message,
        'Internal error occurred: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
      );
    } finally {
      await remove();
    }
  });

  it('denies with the webhook status, worded like Kubernetes', async () => {
    const remove = await install('Validating', 'deny.example.com', { name: 'deny.example.com' });
    behaviour = (req) => ({
      uid: req.uid,
      allowed: false,
      status: { code: 403, message: 'configmaps are not welcome' },
    });
    const r = await api('POST', cms, { body: cm('d1') });
    assert.equal(r.status, 403);
    assert.equal(
      r.json.message,
      'admission webhook "deny.example.com" denied the request: configmaps are not welcome',
    );
    behaviour = (req) => ({ uid: req.uid, allowed: false });
    const bare = await api('POST', cms, { body: cm('d2') });
    assert.equal(bare.status, 400);
    assert.equal(
      bare.json.message,
      'admission webhook "deny.example.com" denied the request without explanation',
    );
    assert.equal((await api('GET', `${cms}/d1`)).status, 404);
    await remove();
  });

  it('honours objectSelector, namespaceSelector and rule operations', async () => {
    const remove = await install('Validating', 'select.example.com', {
      name: 'select.example.com',
      objectSelector: { matchLabels: { checked: 'true' } },
      namespaceSelector: {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] },
        ],
      },
    });
    behaviour = (req) => ({ uid: req.uid, allowed: false, status: { message: 'no' } });
    assert.equal((await api('POST', cms, { body: cm('s1') })).status, 201);
    assert.equal((await api('POST', cms, { body: cm('s2', { checked: 'true' }) })).status, 400);
    assert.equal(reviews.length, 1);
    assert.equal((await api('DELETE', `${cms}/s1`)).status, 200);
    await remove();
  });

  it('applies failurePolicy to unreachable webhooks and timeouts', async () => {
    const unreachable = { url: 'https://127.0.0.1:1/nothing', caBundle: hook.caBundle };
    const removeFail = await install('Validating', 'fail.example.com', {
      name: 'fail.example.com',
      clientConfig: unreachable,
    });
    const r = await api('POST', cms, { body: cm('f1') });
    assert.equal(r.status, 500);
    assert.equal(r.json.reason, 'InternalError');
    assert.match(
      r.json.message,
      /^Internal error occurred: failed calling webhook "fail.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:1\/nothing\?timeout=10s": /,
    );
    await removeFail();
    const removeIgnore = await install('Validating', 'ignore.example.com', {
      name: 'ignore.example.com',
      clientConfig: unreachable,
      failurePolicy: 'Ignore',
    });
    assert.equal((await api('POST', cms, { body: cm('f2') })).status, 201);
    await removeIgnore();
    const removeSlow = await install('Validating', 'slow.example.com', {
      name: 'slow.example.com',
      timeoutSeconds: 1,
    });
    behaviour = async (req) => {
      await new Promise((res) => setTimeout(res, 1500));
      return { uid: req.uid, allowed: true };
    };
    const slow = await api('POST', cms, { body: cm('f3') });
    assert.equal(slow.status, 500);
    assert.match(slow.json.message, /failed calling webhook "slow.example.com"/);
    await removeSlow();
  });

  it('fails dry-run requests to webhooks with side effects, and marks dryRun for NoneOnDryRun', async () => {
    // v1 accepts only None and NoneOnDryRun: a configuration stored from v1beta1 days can still say Some.
    const legacy = config('Validating', 'side.example.com', {
      name: 'side.example.com',
      sideEffects: 'Some',
    });
    const key = '/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/side.example.com';
    await srv.running.storage.create(key, Buffer.from(JSON.stringify(legacy)));
    await new Promise((res) => setTimeout(res, 100));
    const removeSome = () => srv.running.storage.delete(key);
    const r = await api('POST', `${cms}?dryRun=All`, { body: cm('dr1') });
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.equal(r.json.message, 'admission webhook "side.example.com" does not support dry run');
    assert.equal(reviews.length, 0);
    assert.equal((await api('POST', cms, { body: cm('dr2') })).status, 201);
    await removeSome();
    const removeOk = await install('Mutating', 'dry.example.com', {
      name: 'dry.example.com',
      sideEffects: 'NoneOnDryRun',
    });
    reviews.length = 0;
    const d = await api('POST', `${cms}?dryRun=All`, { body: cm('dr3') });
    assert.equal(d.status, 201);
    assert.equal(reviews[0].request.dryRun, true);
    assert.deepEqual(reviews[0].request.options.dryRun, ['All']);
    await removeOk();
  });

  it('sends DELETE with the stored object as oldObject', async () => {
    await api('POST', cms, { body: cm('del1') });
    const remove = await install('Validating', 'delete.example.com', {
      name: 'delete.example.com',
      rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    });
    const r = await api('DELETE', `${cms}/del1`);
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(reviews.length, 1);
    assert.equal(reviews[0].request.operation, 'DELETE');
    assert.equal(reviews[0].request.object, null);
    assert.equal(reviews[0].request.oldObject.metadata.name, 'del1');
    assert.equal(reviews[0].request.options.kind, 'DeleteOptions');
    await remove();
  });

  it('reinvocation: a policy with IfNeeded runs again after a webhook changed the object; webhooks with Never do not', async () => {
    const ADM = '/apis/admissionregistration.k8s.io/v1';
    const seen = `has(object.metadata.labels) && "hooked" in object.metadata.labels ? "yes" : "no"`;
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'sees-webhook' },
      spec: {
        reinvocationPolicy: 'IfNeeded',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
          ],
        },
        matchConditions: [{ name: 'only', expression: 'object.metadata.name.startsWith("reinv")' }],
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression: `Object{metadata: Object.metadata{annotations: {"seen": ${seen}}}}`,
            },
          },
        ],
      },
    };
    assert.equal((await api('POST', `${ADM}/mutatingadmissionpolicies`, { body: policy })).status, 201);
    const binding = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'sees-webhook' },
      spec: { policyName: 'sees-webhook' },
    };
    assert.equal(
      (await api('POST', `${ADM}/mutatingadmissionpolicybindings`, { body: binding })).status,
      201,
    );
    for (let i = 0; i < 400; i++) {
      const l = await api('GET', `${ADM}/mutatingadmissionpolicybindings?resourceVersion=0`);
      if (l.json.items.length) break;
      await new Promise((res) => setTimeout(res, 25));
    }
    const remove = await install('Mutating', 'label.example.com', { name: 'label.example.com' });
    behaviour = (req) => ({
      uid: req.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(
        JSON.stringify([{ op: 'add', path: '/metadata/labels/hooked', value: 'yes' }]),
      ).toString('base64'),
    });
    try {
      const r = await api('POST', cms, { body: cm('reinv1', { app: 'x' }) });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.metadata.labels.hooked, 'yes');
      assert.equal(r.json.metadata.annotations.seen, 'yes');
      // The chain ran twice; the webhook (reinvocationPolicy Never by default) was called once.
      assert.equal(reviews.length, 1);
    } finally {
      await remove();
      await api('DELETE', `${ADM}/mutatingadmissionpolicybindings/sees-webhook`);
      await api('DELETE', `${ADM}/mutatingadmissionpolicies/sees-webhook`);
    }
  });

  it('reinvocation: a webhook with IfNeeded is called again after a later webhook changed the object', async () => {
    const removeFirst = await install('Mutating', 'a-first.example.com', {
      name: 'a-first.example.com',
      reinvocationPolicy: 'IfNeeded',
    });
    const removeSecond = await install('Mutating', 'b-second.example.com', { name: 'b-second.example.com' });
    behaviour = (req) => {
      // Calls are recorded before they are answered: the second call is b-second's.
      const patch =
        reviews.length === 2 ? [{ op: 'add', path: '/metadata/labels/second', value: 'yes' }] : [];
      return {
        uid: req.uid,
        allowed: true,
        ...(patch.length
          ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }
          : {}),
      };
    };
    try {
      const r = await api('POST', cms, { body: cm('reinv2', { app: 'x' }) });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.metadata.labels.second, 'yes');
      // first, second, then first again (it saw the object before second's label).
      assert.equal(reviews.length, 3);
      assert.equal(reviews[2].request.object.metadata.labels.second, 'yes');
    } finally {
      await removeFirst();
      await removeSecond();
    }
  });
});
