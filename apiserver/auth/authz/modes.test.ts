// The other authorization modes against a real HTTPS apiserver: ABAC (policy
// file), AlwaysDeny (system:masters still allowed), the Node authorizer, and
// the Webhook authorizer with its allow/deny caches.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKubeconfig } from '../../../shared/client/kubeconfig';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import {
  certConfig,
  eventually,
  sendJSON,
  startHTTPS,
  waitReady,
  type LocalHTTPS,
  type Requester,
} from '../authn/test-support';

describe('authorization modes', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-authz-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('ABAC (--authorization-policy-file)', () => {
    let srv: TestAPIServer;
    const clients: Requester[] = [];
    const as = async (name: string, groups: string[] = []) => {
      const c = testRequester(await certConfig(srv, name, groups));
      clients.push(c);
      return c;
    };
    before(async () => {
      const file = join(dir, 'abac.jsonl');
      const p = (spec: object) =>
        JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
      writeFileSync(
        file,
        [
          '# one policy per line',
          p({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
          p({ user: 'bob', namespace: 'projectcaribou', resource: 'pods', readonly: true }),
          p({ group: 'system:authenticated', readonly: true, nonResourcePath: '*' }),
          p({ user: '*', namespace: 'shared', resource: 'configmaps', apiGroup: '' }),
          '{"user":"legacy","readonly":true}',
          '',
        ].join('\n'),
      );
      srv = await startTestAPIServer({ authorizationMode: ['ABAC'], authorizationPolicyFile: file });
    });
    after(async () => {
      for (const c of clients) await c.close();
      await srv?.stop();
    });

    it('allows what a matching policy allows, readonly policies only reads', async () => {
      const alice = await as('alice');
      const ns = await alice('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'projectcaribou' } },
      });
      assert.equal(ns.status, 201);
      const bob = await as('bob');
      assert.equal((await bob('GET', '/api/v1/namespaces/projectcaribou/pods')).status, 200);
      const r = await bob('POST', '/api/v1/namespaces/projectcaribou/pods', {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p' },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      });
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the namespace "projectcaribou": No policy matched.',
      );
      assert.equal((await bob('GET', '/api/v1/namespaces/default/pods')).status, 403);
      assert.equal((await bob('GET', '/apis/apps/v1/namespaces/projectcaribou/deployments')).status, 403);
      // Non-resource paths for every authenticated user, readonly.
      assert.equal((await bob('GET', '/version')).status, 200);
      assert.equal((await bob('GET', '/apis')).status, 200);
      // user "*" means every authenticated user (v1beta1).
      const carl = await as('carl');
      assert.equal((await carl('GET', '/api/v1/namespaces/shared/configmaps')).status, 200);
      assert.equal((await carl('GET', '/api/v1/namespaces/default/configmaps')).status, 403);
      // The unversioned v0 format: resource and namespace default to "*", paths too.
      const legacy = await as('legacy');
      assert.equal((await legacy('GET', '/api/v1/namespaces/default/secrets')).status, 200);
      assert.equal((await legacy('DELETE', '/api/v1/namespaces/default/secrets/x')).status, 403);
    });

    it('lists ABAC rules in a SelfSubjectRulesReview', async () => {
      const bob = await as('bob');
      const r = await bob('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectRulesReview',
          spec: { namespace: 'projectcaribou' },
        },
      });
      // bob cannot create reviews under this policy: ABAC only knows reads for him.
      assert.equal(r.status, 403);
      const alice = await as('alice');
      const a = await alice('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectRulesReview',
          spec: { namespace: 'default' },
        },
      });
      assert.equal(a.status, 201);
      assert.deepEqual(a.json.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
      // Like Kubernetes' ABAC RulesFor: policies are filtered by namespace, so the
      // namespace-less path policy is not listed for "default".
      assert.deepEqual(a.json.status.nonResourceRules, []);
      assert.equal(a.json.status.incomplete, false);
    });
  });

  describe('AlwaysDeny', () => {
    let srv: TestAPIServer;
    before(async () => {
      srv = await startTestAPIServer({ authorizationMode: ['AlwaysDeny'] });
    });
    after(async () => {
      await srv?.stop();
    });

    it('forbids everyone but system:masters', async () => {
      const u = testRequester(await certConfig(srv, 'eve'));
      const r = await u('GET', '/api/v1/namespaces');
      await u.close();
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'namespaces is forbidden: User "eve" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.',
      );
      const admin = testRequester(srv.config);
      assert.equal((await admin('GET', '/api/v1/namespaces')).status, 200);
      await admin.close();
    });
  });

  describe('Node, RBAC and Webhook', () => {
    let srv: TestAPIServer;
    let admin: Requester;
    let hook: LocalHTTPS;
    const reviews: any[] = [];
    const clients: Requester[] = [];
    const as = async (name: string, groups: string[] = []) => {
      const c = testRequester(await certConfig(srv, name, groups));
      clients.push(c);
      return c;
    };

    before(async () => {
      hook = await startHTTPS((_req, res, body) => {
        reviews.push(body);
        const spec = body.spec;
        const ra = spec.resourceAttributes;
        let status: any = { allowed: false };
        if (spec.user === 'wendy' && ra?.resource === 'pods' && ra.verb === 'list')
          status = { allowed: true, reason: 'wendy may' };
        if (spec.user === 'dora') status = { allowed: false, denied: true, reason: 'dora is banned' };
        sendJSON(res, 200, { apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status });
      });
      writeKubeconfig(join(dir, 'authz-webhook.kubeconfig'), {
        server: `${hook.url}/authorize`,
        caPem: hook.ca.certPem,
      });
      srv = await startTestAPIServer({
        authorizationMode: ['Node', 'RBAC', 'Webhook'],
        authorizationWebhookConfigFile: join(dir, 'authz-webhook.kubeconfig'),
        authorizationWebhookVersion: 'v1',
      });
      admin = testRequester(srv.config);
      await waitReady(admin);
    });
    after(async () => {
      for (const c of clients) await c.close();
      await admin?.close();
      await srv?.stop();
      await hook?.close();
    });

    it('webhook: asks the remote service (SubjectAccessReview v1) and caches allows and denials', async () => {
      const wendy = await as('wendy', ['pickers']);
      const before = reviews.length;
      for (let i = 0; i < 3; i++)
        assert.equal((await wendy('GET', '/api/v1/namespaces/default/pods')).status, 200);
      assert.equal(reviews.length - before, 1);
      const sar = reviews[before];
      assert.equal(sar.apiVersion, 'authorization.k8s.io/v1');
      assert.equal(sar.kind, 'SubjectAccessReview');
      assert.deepEqual(sar.spec, {
        resourceAttributes: {
          namespace: 'default',
          verb: 'list',
          group: '',
          version: 'v1',
          resource: 'pods',
        },
        user: 'wendy',
        groups: ['pickers', 'system:authenticated'],
      });
      // No opinion: forbidden, cached for the unauthorized TTL.
      for (let i = 0; i < 2; i++)
        assert.equal((await wendy('DELETE', '/api/v1/namespaces/default/pods/x')).status, 403);
      assert.equal(reviews.length - before, 2);
      // An explicit denial, with the webhook's reason.
      const dora = await as('dora');
      const r = await dora('GET', '/api/v1/namespaces/default/pods');
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'pods is forbidden: User "dora" cannot list resource "pods" in API group "" in the namespace "default": dora is banned',
      );
    });

    it('node: a kubelet reads only what its pods need and its own objects', async () => {
      const create = async (path: string, body: any) => {
        const r = await admin('POST', path, { body });
        assert.equal(r.status, 201, r.body.toString());
        return r.json;
      };
      for (const n of ['n1', 'n2'])
        await create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } });
      for (const s of ['s1', 's2', 'pull'])
        await create('/api/v1/namespaces/default/secrets', {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: s },
        });
      await create('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c1' },
      });
      await create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: {
          nodeName: 'n1',
          imagePullSecrets: [{ name: 'pull' }],
          containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'c1' } }] }],
          volumes: [{ name: 'v', secret: { secretName: 's1' } }],
        },
      });
      const kubelet = await as('system:node:n1', ['system:nodes']);
      await eventually(
        async () => (await kubelet('GET', '/api/v1/namespaces/default/secrets/s1')).status === 200,
      );
      assert.equal((await kubelet('GET', '/api/v1/namespaces/default/secrets/pull')).status, 200);
      assert.equal((await kubelet('GET', '/api/v1/namespaces/default/configmaps/c1')).status, 200);
      let r = await kubelet('GET', '/api/v1/namespaces/default/secrets/s2');
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object',
      );
      assert.equal((await kubelet('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1')).status, 200);
      r = await kubelet('GET', '/api/v1/pods');
      assert.equal(r.status, 403);
      assert.match(r.json.message, /can only list\/watch pods with spec\.nodeName field selector/);
      assert.equal((await kubelet('GET', '/api/v1/namespaces/default/pods/web')).status, 200);
      assert.equal((await kubelet('GET', '/api/v1/nodes/n1')).status, 200);
      r = await kubelet('GET', '/api/v1/nodes/n2');
      assert.equal(r.status, 403);
      assert.match(r.json.message, /node 'n1' cannot read 'n2', only its own Node object/);
      // A node's lease, only its own.
      const lease = (name: string) => ({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: 'kube-node-lease' },
        spec: { holderIdentity: name },
      });
      assert.equal(
        (
          await kubelet('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
            body: lease('n1'),
          })
        ).status,
        201,
      );
      assert.equal(
        (await kubelet('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2')).status,
        403,
      );
      // Static node rules: events, services.
      assert.equal((await kubelet('GET', '/api/v1/services')).status, 200);
      // Moving the pod away revokes access.
      assert.equal(
        (await admin('DELETE', '/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0')).status,
        200,
      );
      await eventually(
        async () => (await kubelet('GET', '/api/v1/namespaces/default/secrets/s1')).status === 403,
      );
    });
  });
});
