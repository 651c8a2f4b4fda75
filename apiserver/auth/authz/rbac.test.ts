// RBAC against a real HTTPS apiserver: the bootstrap policy, 403s in
// Kubernetes' words, roles and bindings taking effect, escalation prevention,
// ClusterRole aggregation, dry-run, and kubectl's `auth can-i --list` / `auth whoami`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeKubeconfig } from '../../../shared/client/kubeconfig';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { certConfig, eventually, waitReady, type Requester } from '../authn/test-support';

const run = promisify(execFile);
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

describe('RBAC authorization', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let admin: Requester;
  const users = new Map<string, Requester>();

  async function as(name: string, groups: string[] = []): Promise<Requester> {
    const key = `${name}/${groups.join(',')}`;
    let api = users.get(key);
    if (!api) users.set(key, (api = testRequester(await certConfig(srv, name, groups))));
    return api;
  }

  async function create(path: string, body: any): Promise<any> {
    const r = await admin('POST', path, { body });
    assert.equal(r.status, 201, `${path}: ${r.body.toString()}`);
    return r.json;
  }

  const ns = (name: string) =>
    create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const role = (namespace: string, name: string, rules: any[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules,
  });
  const binding = (
    kind: 'RoleBinding' | 'ClusterRoleBinding',
    name: string,
    roleKind: string,
    roleName: string,
    subjects: any[],
    namespace?: string,
  ) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects,
  });
  const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });

  before(async () => {
    srv = await startTestAPIServer({ authorizationMode: ['Node', 'RBAC'] });
    admin = testRequester(srv.config);
    await waitReady(admin);
    for (const n of ['team-a', 'team-b', 'esc']) await ns(n);
  });
  after(async () => {
    for (const u of users.values()) await u.close();
    await admin?.close();
    await srv?.stop();
  });

  it('creates the bootstrap roles and bindings with Kubernetes names, labels and subjects', async () => {
    for (const name of [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:discovery',
      'system:basic-user',
      'system:public-info-viewer',
      'system:monitoring',
      'system:node',
      'system:node-proxier',
      'system:kube-controller-manager',
      'system:kube-scheduler',
      'system:service-account-issuer-discovery',
      'system:auth-delegator',
      'system:controller:deployment-controller',
      'system:controller:clusterrole-aggregation-controller',
    ]) {
      const r = await admin('GET', `${RBAC}/clusterroles/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.json.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults');
      assert.equal(r.json.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    }
    const ca = (await admin('GET', `${RBAC}/clusterrolebindings/cluster-admin`)).json;
    assert.deepEqual(ca.subjects, [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
    ]);
    const piv = (await admin('GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)).json;
    assert.deepEqual(
      piv.subjects.map((s: any) => s.name),
      ['system:authenticated', 'system:unauthenticated'],
    );
    const dc = (await admin('GET', `${RBAC}/clusterrolebindings/system:controller:deployment-controller`))
      .json;
    assert.equal(dc.subjects.length, 1);
    assert.equal(dc.subjects[0].kind, 'ServiceAccount');
    assert.equal(dc.subjects[0].name, 'deployment-controller');
    assert.equal(dc.subjects[0].namespace, 'kube-system');
    const reader = await admin(
      'GET',
      `${RBAC}/namespaces/kube-system/roles/extension-apiserver-authentication-reader`,
    );
    assert.equal(reader.status, 200);
    const admin_ = (await admin('GET', `${RBAC}/clusterroles/admin`)).json;
    assert.deepEqual(admin_.aggregationRule, {
      clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }],
    });
    // The aggregation controller filled admin/edit/view from system:aggregate-to-*.
    await eventually(
      async () => {
        const view = (await admin('GET', `${RBAC}/clusterroles/view`)).json;
        const edit = (await admin('GET', `${RBAC}/clusterroles/edit`)).json;
        const adm = (await admin('GET', `${RBAC}/clusterroles/admin`)).json;
        return view.rules?.length === 10 && edit.rules?.length === 23 && adm.rules?.length === 25;
      },
      10_000,
      'admin/edit/view aggregated',
    );
  });

  it('forbids with Kubernetes’ message naming user, verb, resource, group and namespace', async () => {
    const bob = await as('bob');
    let r = await bob('GET', '/api/v1/namespaces/default/pods/x');
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods "x" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { name: 'x', kind: 'pods' },
      code: 403,
    });
    r = await bob('GET', '/apis/apps/v1/deployments');
    assert.equal(
      r.json.message,
      'deployments.apps is forbidden: User "bob" cannot list resource "deployments" in API group "apps" at the cluster scope',
    );
    assert.deepEqual(r.json.details, { group: 'apps', kind: 'deployments' });
    r = await bob('GET', '/api/v1/namespaces/default/pods/x/log');
    assert.equal(
      r.json.message,
      'pods "x" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "default"',
    );
    r = await bob('GET', '/api/v1/namespaces/default/configmaps?watch=true');
    assert.match(r.json.message, /cannot watch resource "configmaps"/);
  });

  it('grants what roles and bindings say, per namespace, names and subresources', async () => {
    await create(
      `${RBAC}/namespaces/team-a/roles`,
      role('team-a', 'pod-reader', [
        { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get'] },
      ]),
    );
    await create(
      `${RBAC}/namespaces/team-a/rolebindings`,
      binding('RoleBinding', 'read-pods', 'Role', 'pod-reader', [user('carol')], 'team-a'),
    );
    const carol = await as('carol');
    await eventually(async () => (await carol('GET', '/api/v1/namespaces/team-a/pods')).status === 200);
    assert.equal((await carol('GET', '/api/v1/namespaces/team-a/pods/p/log')).status, 404);
    assert.equal((await carol('GET', '/api/v1/namespaces/team-b/pods')).status, 403);
    assert.equal((await carol('DELETE', '/api/v1/namespaces/team-a/pods/p')).status, 403);
    assert.equal((await carol('GET', '/api/v1/namespaces/team-a/configmaps/settings')).status, 404);
    assert.equal((await carol('GET', '/api/v1/namespaces/team-a/configmaps/other')).status, 403);
    assert.equal((await carol('GET', '/api/v1/namespaces/team-a/configmaps')).status, 403);

    // A ClusterRole bound in one namespace by a RoleBinding; groups as subjects.
    await create(
      `${RBAC}/namespaces/team-b/rolebindings`,
      binding(
        'RoleBinding',
        'qa-view',
        'ClusterRole',
        'view',
        [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'qa' }],
        'team-b',
      ),
    );
    const dan = await as('dan', ['qa']);
    await eventually(async () => (await dan('GET', '/api/v1/namespaces/team-b/services')).status === 200);
    assert.equal((await dan('GET', '/api/v1/namespaces/team-b/secrets')).status, 403);
    assert.equal((await dan('GET', '/api/v1/namespaces/team-a/services')).status, 403);

    // Non-resource URLs through a ClusterRole.
    await create(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'health-detail' },
      rules: [{ nonResourceURLs: ['/readyz/*', '/metrics'], verbs: ['get'] }],
    });
    await create(
      `${RBAC}/clusterrolebindings`,
      binding('ClusterRoleBinding', 'dan-health', 'ClusterRole', 'health-detail', [user('dan')]),
    );
    await eventually(async () => (await dan('GET', '/readyz/ping')).status === 200);

    // Removing the binding takes the permission away.
    assert.equal((await admin('DELETE', `${RBAC}/namespaces/team-a/rolebindings/read-pods`)).status, 200);
    await eventually(async () => (await carol('GET', '/api/v1/namespaces/team-a/pods')).status === 403);
  });

  it('reports dangling role references in the reason', async () => {
    await create(
      `${RBAC}/clusterrolebindings`,
      binding('ClusterRoleBinding', 'ghostly', 'ClusterRole', 'ghost', [user('gus')]),
    );
    const gus = await as('gus');
    await eventually(async () =>
      /RBAC: clusterrole/.test((await gus('GET', '/api/v1/pods')).json?.message ?? ''),
    );
    const r = await gus('GET', '/api/v1/pods');
    assert.equal(
      r.json.message,
      'pods is forbidden: User "gus" cannot list resource "pods" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
    );
  });

  it('needs the same permission for dry-run', async () => {
    await create(
      `${RBAC}/namespaces/team-b/rolebindings`,
      binding('RoleBinding', 'hank-view', 'ClusterRole', 'view', [user('hank')], 'team-b'),
    );
    const hank = await as('hank');
    await eventually(async () => (await hank('GET', '/api/v1/namespaces/team-b/pods')).status === 200);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    const r = await hank('POST', '/api/v1/namespaces/team-b/configmaps?dryRun=All', { body: cm });
    assert.equal(r.status, 403);
    assert.match(r.json.message, /User "hank" cannot create resource "configmaps"/);
  });

  describe('escalation prevention', () => {
    before(async () => {
      // erin manages RBAC in "esc" and may read pods there, nothing more.
      await create(
        `${RBAC}/namespaces/esc/roles`,
        role('esc', 'rbac-manager', [
          {
            apiGroups: ['rbac.authorization.k8s.io'],
            resources: ['roles', 'rolebindings'],
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
          },
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        ]),
      );
      await create(
        `${RBAC}/namespaces/esc/rolebindings`,
        binding('RoleBinding', 'erin', 'Role', 'rbac-manager', [user('erin')], 'esc'),
      );
      const erin = await as('erin');
      await eventually(async () => (await erin('GET', `${RBAC}/namespaces/esc/roles`)).status === 200);
    });

    it('refuses a Role with rules the user does not hold, in Kubernetes’ words', async () => {
      const erin = await as('erin');
      const wide = role('esc', 'pod-killer', [
        { apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'delete'] },
      ]);
      for (const q of ['', '?dryRun=All']) {
        const r = await erin('POST', `${RBAC}/namespaces/esc/roles${q}`, { body: wide });
        assert.equal(r.status, 403, q);
        assert.equal(
          r.json.message,
          'roles.rbac.authorization.k8s.io "pod-killer" is forbidden: user "erin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
            '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
            '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
        );
        assert.deepEqual(r.json.details, {
          name: 'pod-killer',
          group: 'rbac.authorization.k8s.io',
          kind: 'roles',
        });
      }
      const narrow = role('esc', 'pod-lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
      assert.equal((await erin('POST', `${RBAC}/namespaces/esc/roles`, { body: narrow })).status, 201);
      // Updating it to grant more is refused too.
      const r = await erin('PUT', `${RBAC}/namespaces/esc/roles/pod-lister`, {
        body: { ...narrow, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'patch'] }] },
      });
      assert.equal(r.status, 403);
      assert.match(r.json.message, /Verbs:\["patch"\]/);
    });

    it('refuses bindings to roles the user cannot hold, unless allowed to bind them', async () => {
      const erin = await as('erin');
      let r = await erin('POST', `${RBAC}/namespaces/esc/rolebindings`, {
        body: binding('RoleBinding', 'give-edit', 'ClusterRole', 'edit', [user('ivan')]),
      });
      assert.equal(r.status, 403);
      assert.match(
        r.json.message,
        /^rolebindings\.rbac\.authorization\.k8s\.io "give-edit" is forbidden: user "erin" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/,
      );
      r = await erin('POST', `${RBAC}/namespaces/esc/rolebindings`, {
        body: binding('RoleBinding', 'give-lister', 'Role', 'pod-lister', [user('ivan')]),
      });
      assert.equal(r.status, 201, r.body.toString());
      // bind on clusterroles/edit lets her hand out edit without holding it.
      await create(
        `${RBAC}/namespaces/esc/roles`,
        role('esc', 'edit-binder', [
          {
            apiGroups: ['rbac.authorization.k8s.io'],
            resources: ['clusterroles'],
            verbs: ['bind'],
            resourceNames: ['edit'],
          },
        ]),
      );
      await create(
        `${RBAC}/namespaces/esc/rolebindings`,
        binding('RoleBinding', 'erin-binder', 'Role', 'edit-binder', [user('erin')], 'esc'),
      );
      await eventually(async () => {
        const x = await erin('POST', `${RBAC}/namespaces/esc/rolebindings?dryRun=All`, {
          body: binding('RoleBinding', 'give-edit', 'ClusterRole', 'edit', [user('ivan')]),
        });
        return x.status === 201;
      });
    });

    it('lets a user with the escalate verb write any role', async () => {
      await create(
        `${RBAC}/namespaces/esc/roles`,
        role('esc', 'escalator', [
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] },
        ]),
      );
      await create(
        `${RBAC}/namespaces/esc/rolebindings`,
        binding('RoleBinding', 'erin-escalates', 'Role', 'escalator', [user('erin')], 'esc'),
      );
      const erin = await as('erin');
      const wide = role('esc', 'everything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
      await eventually(
        async () => (await erin('POST', `${RBAC}/namespaces/esc/roles`, { body: wide })).status === 201,
      );
    });
  });

  it('aggregates ClusterRoles by label and keeps the aggregate current', async () => {
    await create(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'monitoring' },
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }],
      },
    });
    const part = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'monitoring-endpoints',
        labels: {
          'example.com/aggregate-to-monitoring': 'true',
          'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        },
      },
      rules: [{ apiGroups: [''], resources: ['endpoints'], verbs: ['get'] }],
    };
    await create(`${RBAC}/clusterroles`, part);
    const rulesOf = async (name: string) =>
      (await admin('GET', `${RBAC}/clusterroles/${name}`)).json.rules ?? [];
    await eventually(
      async () => {
        const rules = await rulesOf('monitoring');
        return rules.length === 1 && rules[0].resources[0] === 'endpoints' && rules[0].verbs.join() === 'get';
      },
      10_000,
      'aggregate',
    );
    // Through view (aggregate-to-view) into edit and admin.
    await eventually(
      async () =>
        (await rulesOf('admin')).some(
          (r: any) => r.resources?.includes('endpoints') && r.verbs?.length === 1,
        ),
      10_000,
      'view/edit/admin',
    );
    const r = await admin('PUT', `${RBAC}/clusterroles/monitoring-endpoints`, {
      body: {
        ...part,
        rules: [{ apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['get', 'list'] }],
      },
    });
    assert.equal(r.status, 200);
    await eventually(
      async () => (await rulesOf('monitoring'))[0]?.verbs?.length === 2,
      10_000,
      'updated aggregate',
    );
    assert.equal((await admin('DELETE', `${RBAC}/clusterroles/monitoring-endpoints`)).status, 200);
    await eventually(async () => (await rulesOf('monitoring')).length === 0, 10_000, 'emptied aggregate');
    // Only cluster admins may set an aggregationRule.
    await create(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'cr-writer' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] }],
    });
    await create(
      `${RBAC}/clusterrolebindings`,
      binding('ClusterRoleBinding', 'jill-cr-writer', 'ClusterRole', 'cr-writer', [user('jill')]),
    );
    const jill = await as('jill');
    await eventually(async () => {
      const x = await jill('POST', `${RBAC}/clusterroles`, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'sneaky' },
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
        },
      });
      return (
        x.status === 403 &&
        x.json.message ===
          'clusterroles.rbac.authorization.k8s.io "sneaky" is forbidden: must have cluster-admin privileges to use the aggregationRule'
      );
    });
  });

  it('serves `kubectl auth can-i` (--list) and `kubectl auth whoami` to a real kubectl', async () => {
    await create(
      `${RBAC}/namespaces/team-a/roles`,
      role('team-a', 'deployer', [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create'] },
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get'] },
      ]),
    );
    await create(
      `${RBAC}/namespaces/team-a/rolebindings`,
      binding('RoleBinding', 'kate-deployer', 'Role', 'deployer', [user('kate')], 'team-a'),
    );
    const cfg = await certConfig(srv, 'kate', ['deployers']);
    const kubeconfig = join(srv.dir, 'kate.kubeconfig');
    writeKubeconfig(kubeconfig, {
      server: cfg.server,
      caPem: cfg.caPem!,
      certPem: cfg.certPem,
      keyPem: cfg.keyPem,
    });
    const kubectl = (...args: string[]) =>
      run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e) => ({ code: e.code as number, out: `${e.stdout}${e.stderr}` }),
      );
    await eventually(
      async () =>
        (await kubectl('auth', 'can-i', 'create', 'deployments.apps', '-n', 'team-a')).out.trim() === 'yes',
    );
    const no = await kubectl('auth', 'can-i', 'delete', 'deployments.apps', '-n', 'team-a');
    assert.equal(no.out.trim(), 'no');
    assert.equal(no.code, 1);
    assert.equal(
      (await kubectl('auth', 'can-i', 'get', 'configmaps/app-config', '-n', 'team-a')).out.trim(),
      'yes',
    );
    assert.equal((await kubectl('auth', 'can-i', 'get', '/version')).out.trim(), 'yes');
    const list = await kubectl('auth', 'can-i', '--list', '-n', 'team-a');
    assert.equal(list.code, 0, list.out);
    const lines = list.out.split('\n');
    assert.match(lines[0], /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    assert.ok(
      lines.some((l) => /^deployments\.apps\s+\[\]\s+\[\]\s+\[get list create\]/.test(l)),
      list.out,
    );
    assert.ok(
      lines.some((l) => /^configmaps\s+\[\]\s+\[app-config\]\s+\[get\]/.test(l)),
      list.out,
    );
    assert.ok(
      lines.some((l) => /^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/.test(l)),
      list.out,
    );
    assert.ok(
      lines.some((l) => /^\s+\[\/version\]\s+\[\]\s+\[get\]/.test(l)),
      list.out,
    );
    const who = await kubectl('auth', 'whoami');
    assert.equal(who.code, 0, who.out);
    assert.match(
      who.out,
      /^ATTRIBUTE\s+VALUE\nUsername\s+kate\nGroups\s+\[deployers system:authenticated\]\n$/,
    );
    const json = await kubectl('auth', 'whoami', '-o', 'json');
    assert.deepEqual(JSON.parse(json.out).status.userInfo, {
      username: 'kate',
      groups: ['deployers', 'system:authenticated'],
    });
  });
});
