// metrics-server against an in-process apiserver enforcing RBAC: it registers
// v1beta1.metrics.k8s.io, becomes Available through the aggregation layer,
// trusts the aggregator's headers and asks the apiserver whether the caller may
// read metrics (SubjectAccessReview): a user without a role gets Kubernetes' 403.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../shared/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../apiserver/server/testing';
import { frontProxyFlags } from '../shared/cluster/front-proxy';
import { MetricsServer } from './server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  what: string,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('metrics-server behind the aggregation layer', function () {
  this.timeout(90_000);
  let dir = '';
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let client: Client;
  let ms: MetricsServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-metrics-server-'));
    const flags = await frontProxyFlags(join(dir, 'front-proxy'));
    const values: Record<string, unknown> = {};
    for (const f of flags) {
      const [k, v] = f.replace(/^--/, '').split('=');
      const key = k.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
      values[key] = /headers|names|prefix/.test(k) ? [v] : v;
    }
    srv = await startTestAPIServer({ ...values, authorizationMode: ['RBAC'] });
    api = testRequester(srv.config);
    client = Client.create(loadKubeconfig(srv.kubeconfig), { contentType: 'application/json' });
    ms = new MetricsServer({ client, bindAddress: '127.0.0.1', port: 0, resolutionMs: 60_000 });
    await ms.start();
  });

  after(async () => {
    await ms?.stop();
    await client?.close();
    await api?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers v1beta1.metrics.k8s.io and passes the availability check', async () => {
    const c = await until(async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io');
      const c = r.json?.status?.conditions?.find((x: any) => x.type === 'Available');
      return c?.status === 'True' && c;
    }, 'Available');
    assert.equal(c.reason, 'Passed');
    const svc = await api('GET', '/api/v1/namespaces/kube-system/services/metrics-server');
    assert.equal(svc.json.spec.type, 'ExternalName');
  });

  it('serves the cluster admin through the aggregator', async () => {
    const r = await api('GET', '/apis/metrics.k8s.io/v1beta1/nodes');
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.json.kind, 'NodeMetricsList');
    const d = await api('GET', '/apis/metrics.k8s.io/v1beta1');
    assert.deepEqual(
      d.json.resources.map((x: any) => x.name),
      ['nodes', 'pods'],
    );
  });

  it('asks the apiserver whether other users may read metrics', async () => {
    const as = { headers: { 'Impersonate-User': 'jane' } };
    // The apiserver authorizes the request itself first: jane may not even reach the group.
    const denied = await api('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', as);
    assert.equal(denied.status, 403, denied.body.toString());
    // Granted a role, both the apiserver and metrics-server's own check let jane through.
    const role = await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'metrics-reader' },
        rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list'] }],
      },
    });
    assert.equal(role.status, 201, role.body.toString());
    const binding = await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'jane-metrics' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
        subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    assert.equal(binding.status, 201, binding.body.toString());
    const ok = await until(async () => {
      const r = await api('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', as);
      return r.status === 200 && r;
    }, 'jane allowed');
    assert.equal(ok.json.kind, 'PodMetricsList');
  });

  it('refuses callers that are not the trusted front proxy', async () => {
    const { request, Agent } = await import('undici');
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const r = await request(`https://127.0.0.1:${ms.port}/apis/metrics.k8s.io/v1beta1/nodes`, {
        dispatcher,
        headers: { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
      });
      assert.equal(r.statusCode, 401);
      assert.equal(((await r.body.json()) as any).reason, 'Unauthorized');
    } finally {
      await dispatcher.close();
    }
  });

  it('denies, as Kubernetes words it, a user the apiserver does not authorize', async () => {
    const { request, Agent } = await import('undici');
    // The front proxy's own certificate: what the aggregator presents.
    const fp = join(dir, 'front-proxy');
    const dispatcher = new Agent({
      connect: {
        rejectUnauthorized: false,
        cert: readFileSync(join(fp, 'front-proxy-client.crt')),
        key: readFileSync(join(fp, 'front-proxy-client.key')),
      },
    });
    try {
      const r = await request(
        `https://127.0.0.1:${ms.port}/apis/metrics.k8s.io/v1beta1/namespaces/default/pods`,
        {
          dispatcher,
          headers: { 'x-remote-user': 'bob', 'x-remote-group': 'system:authenticated' },
        },
      );
      const body = (await r.body.json()) as any;
      assert.equal(r.statusCode, 403);
      assert.equal(body.reason, 'Forbidden');
      assert.equal(
        body.message,
        'pods.metrics.k8s.io is forbidden: User "bob" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"',
      );
      assert.deepEqual(body.details, { group: 'metrics.k8s.io', kind: 'pods' });
    } finally {
      await dispatcher.close();
    }
  });
});
