// Impersonation against a real HTTPS apiserver with RBAC: every impersonated
// attribute authorized as verb "impersonate", Kubernetes' 403s, and the
// effective user of the request.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { certConfig, eventually, waitReady, whoami, withHeaders, type Requester } from './authn/test-support';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

describe('impersonation', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let admin: Requester;
  const clients: Requester[] = [];

  async function as(name: string, headers: Record<string, string | string[]> = {}): Promise<Requester> {
    const c = withHeaders(await certConfig(srv, name), headers);
    clients.push(c);
    return c;
  }

  before(async () => {
    srv = await startTestAPIServer({ authorizationMode: ['RBAC'] });
    admin = testRequester(srv.config);
    await waitReady(admin);
    // pat may impersonate the user ivy, the group qa, the scopes extra "view", one uid and the SA robot.
    const create = async (path: string, body: any) =>
      assert.equal((await admin('POST', path, { body })).status, 201);
    await create(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'limited-impersonator' },
      rules: [
        { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['ivy'] },
        { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['qa'] },
        {
          apiGroups: ['authentication.k8s.io'],
          resources: ['userextras/scopes'],
          verbs: ['impersonate'],
          resourceNames: ['view'],
        },
        {
          apiGroups: ['authentication.k8s.io'],
          resources: ['uids'],
          verbs: ['impersonate'],
          resourceNames: ['ivy-uid'],
        },
      ],
    });
    await create(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'pat' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'limited-impersonator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'pat' }],
    });
    await create(`${RBAC}/namespaces/default/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'sa-impersonator', namespace: 'default' },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['robot'] },
      ],
    });
    await create(`${RBAC}/namespaces/default/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'pat-sa', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'sa-impersonator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'pat' }],
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await admin?.close();
    await srv?.stop();
  });

  it('runs the request as the impersonated user, groups, uid and extras', async () => {
    const pat = await as('pat', {
      'Impersonate-User': 'ivy',
      'Impersonate-Group': 'qa',
      'Impersonate-Uid': 'ivy-uid',
      'Impersonate-Extra-Scopes': 'view',
    });
    await eventually(async () => (await whoami(pat)).status === 201);
    const r = await whoami(pat);
    assert.deepEqual(r.user, {
      username: 'ivy',
      uid: 'ivy-uid',
      groups: ['qa', 'system:authenticated'],
      extra: { scopes: ['view'] },
    });
    // And ivy's permissions apply, not pat's.
    const pods = await pat('GET', '/api/v1/namespaces/default/pods');
    assert.equal(pods.status, 403);
    assert.match(pods.json.message, /^pods is forbidden: User "ivy" cannot list resource "pods"/);
  });

  it('forbids each attribute the requester may not impersonate, in Kubernetes’ words', async () => {
    const cases: [Record<string, string>, string][] = [
      [
        { 'Impersonate-User': 'root' },
        'users "root" is forbidden: User "pat" cannot impersonate resource "users" in API group "" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'ivy', 'Impersonate-Group': 'system:masters' },
        'groups "system:masters" is forbidden: User "pat" cannot impersonate resource "groups" in API group "" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'ivy', 'Impersonate-Extra-Scopes': 'admin' },
        'userextras.authentication.k8s.io "admin" is forbidden: User "pat" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'ivy', 'Impersonate-Uid': 'other' },
        'uids.authentication.k8s.io "other" is forbidden: User "pat" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'system:serviceaccount:kube-system:robot' },
        'serviceaccounts "robot" is forbidden: User "pat" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"',
      ],
    ];
    for (const [headers, message] of cases) {
      const pat = await as('pat', headers);
      const r = await whoami(pat);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.equal(r.json.reason, 'Forbidden');
      assert.equal(r.json.message, message);
    }
  });

  it('gives an impersonated service account its groups', async () => {
    const pat = await as('pat', { 'Impersonate-User': 'system:serviceaccount:default:robot' });
    const r = await whoami(pat);
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.user, {
      username: 'system:serviceaccount:default:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
  });

  it('refuses groups or extras without a user, and lets system:masters be anyone', async () => {
    const pat = await as('pat', { 'Impersonate-Group': 'qa' });
    const r = await whoami(pat);
    assert.equal(r.status, 500);
    assert.match(r.json.message, /without impersonating a user/);
    const root = withHeaders(srv.config, {
      'Impersonate-User': 'someone',
      'Impersonate-Group': ['system:masters', 'other'],
    });
    clients.push(root);
    const w = await whoami(root);
    assert.deepEqual(w.user, {
      username: 'someone',
      groups: ['system:masters', 'other', 'system:authenticated'],
    });
    assert.equal((await root('GET', '/api/v1/namespaces')).status, 200);
    const anon = withHeaders(srv.config, { 'Impersonate-User': 'system:anonymous' });
    clients.push(anon);
    const a = await anon('GET', '/version');
    assert.equal(a.status, 200);
    const forbidden = await anon('GET', '/api');
    assert.equal(forbidden.json.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
  });
});
