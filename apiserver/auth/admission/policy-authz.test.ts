// CEL's authz library in admission policies, against a real HTTPS apiserver with
// RBAC: `authorizer.group(...).resource(...).check(verb)` asks the server's
// authorizer chain as the requesting user, `authorizer.requestResource` is the
// request's own resource, and `authorizer.serviceAccount(...)` another identity.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { certConfig, waitReady, withHeaders, type Requester } from '../authn/test-support';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CMS = '/api/v1/namespaces/default/configmaps';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const policy = (name: string, expression: string, messageExpression?: string) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
      ],
    },
    matchConditions: [{ name: 'marked', expression: `object.metadata.name.startsWith('${name}-')` }],
    validations: [{ expression, ...(messageExpression ? { messageExpression } : {}) }],
  },
});

const binding = (name: string) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName: name, validationActions: ['Deny'] },
});

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

describe('admission policies: the CEL authz library', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let admin: Requester;
  let alice: Requester;
  let bob: Requester;

  before(async () => {
    srv = await startTestAPIServer({ authorizationMode: ['RBAC'] });
    admin = testRequester(srv.config);
    await waitReady(admin);
    alice = withHeaders(await certConfig(srv, 'alice'), {});
    bob = withHeaders(await certConfig(srv, 'bob'), {});
    const must = async (path: string, body: any) => {
      const r = await admin('POST', path, { body });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    };
    // Both may create ConfigMaps; only alice may also create Deployments.
    await must(`${RBAC}/clusterroles`, {
      metadata: { name: 'cm-writer' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }],
    });
    await must(`${RBAC}/clusterroles`, {
      metadata: { name: 'deployer' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create'] }],
    });
    for (const [user, role] of [
      ['alice', 'cm-writer'],
      ['bob', 'cm-writer'],
      ['alice', 'deployer'],
    ])
      await must(`${RBAC}/clusterrolebindings`, {
        metadata: { name: `${user}-${role}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      });
    for (const p of [
      policy(
        'deployers',
        "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('create').allowed()",
        "'only deployers: ' + authorizer.group('apps').resource('deployments').check('create').reason()",
      ),
      policy('own', "authorizer.requestResource.check('get').allowed()"),
      policy(
        'sa',
        "!authorizer.serviceAccount('default', 'robot').group('').resource('configmaps').check('create').allowed()",
      ),
    ]) {
      await must(`${ADM}/validatingadmissionpolicies`, p);
      await must(`${ADM}/validatingadmissionpolicybindings`, binding(p.metadata.name));
    }
    await sleep(200); // the plugin reads policies and bindings from the watch cache
  });
  after(async () => {
    for (const c of [admin, alice, bob]) await c?.close();
    await srv?.stop();
  });

  it("checks the requesting user's permissions through the authorizer chain", async () => {
    const ok = await alice('POST', CMS, { body: cm('deployers-a') });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    const denied = await bob('POST', CMS, { body: cm('deployers-b') });
    assert.equal(denied.status, 422, JSON.stringify(denied.json));
    assert.match(denied.json.message, /denied request: only deployers:/);
  });

  it("authorizer.requestResource is the request's own resource", async () => {
    // bob may get configmaps: the check on the request's resource with verb get is allowed.
    assert.equal((await bob('POST', CMS, { body: cm('own-b') })).status, 201);
  });

  it('authorizer.serviceAccount asks as that service account', async () => {
    // The robot service account has no permissions: the negated check passes.
    assert.equal((await alice('POST', CMS, { body: cm('sa-a') })).status, 201);
    const r = await admin('POST', `${RBAC}/clusterrolebindings`, {
      body: {
        metadata: { name: 'robot-cm-writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cm-writer' },
        subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'default' }],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    let status = 0;
    for (let i = 0; i < 50 && status !== 422; i++) {
      status = (await alice('POST', CMS, { body: cm(`sa-a${i}`) })).status;
      if (status !== 422) await sleep(100);
    }
    assert.equal(status, 422, 'denied once the service account may create ConfigMaps');
  });
});
