// `tkube up` with RBAC on: the apiserver authorizes with Node,RBAC, the
// controller manager runs each controller as its own kube-system service
// account (--use-service-account-credentials) and the scheduler as
// system:kube-scheduler, node agents as system:node:<name>. The audit log
// shows who did what.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Client, loadKubeconfig } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';
import { tempDir } from './support/processes';

interface AuditEvent {
  verb: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string };
  responseStatus?: { code?: number };
}

describe('tkube up with RBAC (processes)', function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: Client;
  let auditLog: string;
  let dir: string;

  before(async () => {
    dir = tempDir('rbac');
    const policy = join(dir, 'audit-policy.yaml');
    auditLog = join(dir, 'audit.log');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    // The cluster's data goes in a directory of its own (removed by cleanup): with that,
    // startCluster tries again on fresh ports when one it chose was taken before its process bound it.
    cluster = await startCluster({
      nodes: 1,
      apiserverArgs: ['--audit-policy-file', policy, '--audit-log-path', auditLog],
    });
    client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function events(): AuditEvent[] {
    return readFileSync(auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as AuditEvent);
  }

  it('runs a Deployment with every controller under its own service account', async () => {
    const ns = 'rbac-e2e';
    await client.resource('namespaces').create({ metadata: { name: ns } });
    await client
      .resource('deployments.apps')
      .namespace(ns)
      .create({
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      });
    await waitUntil(
      async () => {
        const d = await client.resource('deployments.apps').namespace(ns).get('web');
        return d.status?.readyReplicas === 2;
      },
      90_000,
      'the Deployment to be Ready',
    );

    const seen = events();
    const users = new Set(seen.map((e) => e.user.username));
    const did = (user: string, verb: string, resource: string, subresource?: string) =>
      seen.some(
        (e) =>
          e.user.username === user &&
          e.verb === verb &&
          e.objectRef?.resource === resource &&
          e.objectRef?.subresource === subresource &&
          (e.responseStatus?.code ?? 0) < 300,
      );
    const sa = (name: string) => `system:serviceaccount:kube-system:${name}`;
    assert.ok(did(sa('deployment-controller'), 'create', 'replicasets'), [...users].join('\n'));
    assert.ok(did(sa('replicaset-controller'), 'create', 'pods'));
    assert.ok(did(sa('service-account-controller'), 'create', 'serviceaccounts'));
    assert.ok(did(sa('root-ca-cert-publisher'), 'create', 'configmaps'));
    assert.ok(did('system:kube-scheduler', 'create', 'pods', 'binding'));
    // Events come from the controller that records them.
    assert.ok(did(sa('replicaset-controller'), 'create', 'events'));
    assert.ok(did(sa('deployment-controller'), 'create', 'events'));
    assert.ok(did('system:node:tkube-node-1', 'patch', 'pods', 'status'));
    // Each controller's requests carry its name in the user agent.
    assert.ok(
      seen.some(
        (e) =>
          e.user.username === sa('replicaset-controller') &&
          /^kube-controller-manager\/v\d+\.\d+\.\d+ \(\w+\/\w+\) kubernetes\/\w+\/replicaset-controller$/.test(
            e.userAgent ?? '',
          ),
      ),
    );
    // Every controller that ran got its own account: none was refused for lack of a role.
    const refused = seen.filter((e) => e.user.username.startsWith(sa('')) && e.responseStatus?.code === 403);
    assert.deepEqual(
      refused.map(
        (e) => `${e.user.username} ${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''}`,
      ),
      [],
    );
  });

  it("serves the event-loop lag on the apiserver's and the controller manager's /metrics to the admin", async () => {
    const cfg = loadKubeconfig(cluster.kubeconfig);
    const admin = new Agent({ connect: { rejectUnauthorized: false, cert: cfg.certPem, key: cfg.keyPem } });
    try {
      const cm = cluster.procs.find((p) => p.name === 'controller-manager')!;
      const args = cm.child.spawnargs;
      const port = args[args.indexOf('--secure-port') + 1];
      for (const url of [`${cluster.server}/metrics`, `https://127.0.0.1:${port}/metrics`]) {
        const r = await request(url, { dispatcher: admin });
        const body = await r.body.text();
        assert.equal(r.statusCode, 200, `${url}: ${body.slice(0, 200)}`);
        assert.match(body, /^nodejs_eventloop_lag_p99_seconds \d/m, url);
      }
    } finally {
      await admin.close();
    }
  });
});
