// The review APIs against a real HTTPS apiserver with RBAC: SubjectAccessReview,
// LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview,
// TokenReview and SelfSubjectReview, answers and validation.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import {
  anonymousConfig,
  certConfig,
  eventually,
  tokenRequester,
  waitReady,
  whoami,
  type Requester,
} from '../authn/test-support';

const AUTHZ = '/apis/authorization.k8s.io/v1';
const AUTHN = '/apis/authentication.k8s.io/v1';

describe('review APIs', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let admin: Requester;
  let dir: string;
  const clients: Requester[] = [];

  const review = (kind: string, spec: any, metadata?: any) => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind,
    ...(metadata ? { metadata } : {}),
    spec,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-reviews-'));
    writeFileSync(join(dir, 'tokens.csv'), 'tok-olive,olive,uid-olive,readers\n');
    srv = await startTestAPIServer({ authorizationMode: ['RBAC'], tokenAuthFile: join(dir, 'tokens.csv') });
    admin = testRequester(srv.config);
    await waitReady(admin);
    const r = await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'readers-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
      },
    });
    assert.equal(r.status, 201);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await admin?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SubjectAccessReview: answers for any user, resource and non-resource', async () => {
    const sar = async (spec: any) => {
      const r = await admin('POST', `${AUTHZ}/subjectaccessreviews`, {
        body: review('SubjectAccessReview', spec),
      });
      assert.equal(r.status, 201, r.body.toString());
      return r.json;
    };
    const attrs = { namespace: 'default', verb: 'list', resource: 'pods' };
    await eventually(
      async () =>
        (await sar({ user: 'olive', groups: ['readers'], resourceAttributes: attrs })).status.allowed,
    );
    const yes = await sar({ user: 'olive', groups: ['readers'], resourceAttributes: attrs });
    assert.deepEqual(yes.status, { allowed: true });
    assert.equal(yes.kind, 'SubjectAccessReview');
    assert.deepEqual(yes.spec.resourceAttributes, attrs);
    const no = await sar({ user: 'olive', resourceAttributes: { ...attrs, namespace: 'kube-system' } });
    assert.deepEqual(no.status, { allowed: false });
    assert.equal(
      (await sar({ groups: ['system:authenticated'], nonResourceAttributes: { path: '/apis', verb: 'get' } }))
        .status.allowed,
      true,
    );
    assert.equal(
      (
        await sar({
          groups: ['system:unauthenticated'],
          nonResourceAttributes: { path: '/apis', verb: 'get' },
        })
      ).status.allowed,
      false,
    );
    assert.equal(
      (
        await sar({
          groups: ['system:unauthenticated'],
          nonResourceAttributes: { path: '/healthz', verb: 'get' },
        })
      ).status.allowed,
      true,
    );
  });

  it('SubjectAccessReview: validation errors as 422 Invalid', async () => {
    let r = await admin('POST', `${AUTHZ}/subjectaccessreviews`, { body: review('SubjectAccessReview', {}) });
    assert.equal(r.status, 422);
    assert.equal(
      r.json.message,
      'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    );
    r = await admin('POST', `${AUTHZ}/subjectaccessreviews`, {
      body: review(
        'SubjectAccessReview',
        { user: 'x', resourceAttributes: { verb: 'get' } },
        { name: 'named' },
      ),
    });
    assert.equal(r.status, 422);
    assert.match(r.json.message, /metadata: Invalid value: .*: must be empty/);
  });

  it('SelfSubjectAccessReview: the requester’s own permission (kubectl auth can-i)', async () => {
    const olive = tokenRequester(srv, 'tok-olive');
    clients.push(olive);
    const ssar = async (spec: any) =>
      (
        await olive('POST', `${AUTHZ}/selfsubjectaccessreviews`, {
          body: review('SelfSubjectAccessReview', spec),
        })
      ).json;
    assert.equal(
      (await ssar({ resourceAttributes: { namespace: 'default', verb: 'get', resource: 'configmaps' } }))
        .status.allowed,
      true,
    );
    assert.equal(
      (await ssar({ resourceAttributes: { namespace: 'default', verb: 'get', resource: 'secrets' } })).status
        .allowed,
      false,
    );
    const bad = await olive('POST', `${AUTHZ}/selfsubjectaccessreviews`, {
      body: review('SelfSubjectAccessReview', { resourceAttributes: {}, nonResourceAttributes: {} }),
    });
    assert.equal(bad.status, 422);
    assert.match(
      bad.json.message,
      /^SelfSubjectAccessReview\.authorization\.k8s\.io "" is invalid: spec: Invalid value: .*exactly one of/,
    );
  });

  it('LocalSubjectAccessReview: the namespace must match', async () => {
    const spec = {
      user: 'olive',
      groups: ['readers'],
      resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' },
    };
    let r = await admin('POST', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', spec),
    });
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.status.allowed, true);
    assert.equal(r.json.metadata.namespace, 'default');
    r = await admin('POST', `${AUTHZ}/namespaces/kube-system/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', spec),
    });
    assert.equal(r.status, 422);
    assert.match(
      r.json.message,
      /spec\.resourceAttributes\.namespace: Invalid value: "default": must match metadata\.namespace/,
    );
    r = await admin('POST', `${AUTHZ}/namespaces/kube-system/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', spec, { namespace: 'default' }),
    });
    assert.equal(r.status, 400);
    r = await admin('POST', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', {
        user: 'olive',
        nonResourceAttributes: { path: '/x', verb: 'get' },
      }),
    });
    assert.equal(r.status, 422);
    assert.match(
      r.json.message,
      /spec\.nonResourceAttributes: Invalid value: .*: disallowed on this kind of request/,
    );
  });

  it('SelfSubjectRulesReview: resource and non-resource rules of the namespace', async () => {
    const olive = tokenRequester(srv, 'tok-olive');
    clients.push(olive);
    const r = await olive('POST', `${AUTHZ}/selfsubjectrulesreviews`, {
      body: review('SelfSubjectRulesReview', { namespace: 'default' }),
    });
    assert.equal(r.status, 201, r.body.toString());
    const st = r.json.status;
    assert.equal(st.incomplete, false);
    assert.ok(
      st.resourceRules.some(
        (x: any) => x.resources.includes('configmaps') && x.verbs.join() === 'get,list,watch',
      ),
    );
    assert.ok(st.resourceRules.some((x: any) => x.resources.includes('selfsubjectrulesreviews')));
    assert.ok(st.nonResourceRules.some((x: any) => x.nonResourceURLs.includes('/version')));
    const other = await olive('POST', `${AUTHZ}/selfsubjectrulesreviews`, {
      body: review('SelfSubjectRulesReview', { namespace: 'kube-system' }),
    });
    assert.ok(!other.json.status.resourceRules.some((x: any) => x.resources.includes('configmaps')));
    const none = await olive('POST', `${AUTHZ}/selfsubjectrulesreviews`, {
      body: review('SelfSubjectRulesReview', {}),
    });
    assert.equal(none.status, 400);
    assert.equal(none.json.message, 'no namespace on request');
  });

  it('TokenReview: authenticates a token for a reviewer', async () => {
    const tr = async (spec: any) =>
      admin('POST', `${AUTHN}/tokenreviews`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec },
      });
    let r = await tr({ token: 'tok-olive' });
    assert.equal(r.status, 201);
    assert.deepEqual(r.json.status, {
      authenticated: true,
      user: { username: 'olive', uid: 'uid-olive', groups: ['readers', 'system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    r = await tr({ token: 'nope' });
    assert.equal(r.status, 201);
    assert.equal(r.json.status.authenticated, undefined);
    assert.equal(r.json.status.error, 'invalid bearer token');
    // Static tokens are good for the API audiences only.
    r = await tr({ token: 'tok-olive', audiences: ['someone-else'] });
    assert.equal(r.json.status.authenticated, undefined);
    r = await tr({});
    assert.equal(r.status, 400);
    assert.equal(r.json.message, 'token is required for TokenReview in authentication');
    // Reviewing tokens is itself authorized (system:auth-delegator has it, olive does not).
    const olive = tokenRequester(srv, 'tok-olive');
    clients.push(olive);
    const f = await olive('POST', `${AUTHN}/tokenreviews`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'x' } },
    });
    assert.equal(f.status, 403);
    assert.equal(
      f.json.message,
      'tokenreviews.authentication.k8s.io is forbidden: User "olive" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  it('SelfSubjectReview: who am I, for authenticated users only', async () => {
    const u = testRequester(await certConfig(srv, 'quinn', ['a', 'b']));
    clients.push(u);
    const r = await whoami(u);
    assert.equal(r.status, 201);
    assert.equal(r.json.kind, 'SelfSubjectReview');
    assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1');
    assert.match(r.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(r.user, { username: 'quinn', groups: ['a', 'b', 'system:authenticated'] });
    const anon = testRequester(anonymousConfig(srv));
    clients.push(anon);
    assert.equal((await whoami(anon)).status, 403);
  });
});
