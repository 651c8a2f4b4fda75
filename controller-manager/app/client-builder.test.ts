// The controllers' client builders against a real apiserver: every client has
// a limiter of its own and a user agent ending in its name; with service
// account credentials it is that kube-system account (created when missing),
// authenticated by a TokenRequest token and not by the root certificate.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../../shared/client';
import { logger } from '../../shared/log';
import type { ControllerDescriptor } from '../controller';
import { TokenBucket } from '../../shared/client/rate-limiter';
import { startTestControllerManager } from './testing';
import { ServiceAccountClientBuilder, SimpleClientBuilder, controllerClientName } from './client-builder';

const UA = 'kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/tkube';

async function whoami(c: Client): Promise<string> {
  const r = await c.rest.request<any>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return r.status.userInfo.username;
}

describe('controller-manager: client builders', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let root: Client;

  before(async () => {
    srv = await startTestAPIServer();
    root = Client.create(srv.config, { http2: false });
  });
  after(async () => {
    await root?.close();
    await srv?.stop();
  });

  it('names clients as kube-controller-manager does', () => {
    assert.equal(controllerClientName('deployment'), 'deployment-controller');
    assert.equal(controllerClientName('garbagecollector'), 'generic-garbage-collector');
    assert.equal(controllerClientName('taint-eviction-controller'), 'node-controller');
    assert.equal(controllerClientName('daemonset'), 'daemon-set-controller');
    // The volume controllers' bootstrap roles: system:controller:persistent-volume-binder, pv-protection-controller ...
    assert.equal(controllerClientName('persistentvolume-binder'), 'persistent-volume-binder');
    assert.equal(controllerClientName('pv-protection'), 'pv-protection-controller');
    assert.equal(controllerClientName('pvc-protection'), 'pvc-protection-controller');
    assert.equal(controllerClientName('ephemeral-volume'), 'ephemeral-volume-controller');
    assert.equal(controllerClientName('something-new'), 'something-new-controller');
  });

  it('simple: the root identity, a limiter per client, the name in the user agent', async () => {
    const b = new SimpleClientBuilder({
      root,
      clientOptions: { qps: 7, burst: 9 },
      userAgent: UA,
      log: logger('test'),
    });
    const a = await b.client('deployment-controller');
    const c = await b.client('replicaset-controller');
    assert.notEqual(a.rest.limiter, c.rest.limiter);
    assert.notEqual(a.rest.limiter, root.rest.limiter);
    assert.equal(a.rest.limiter.qps, 7);
    assert.equal(a.rest.userAgent, `${UA}/deployment-controller`);
    assert.equal(await whoami(a), await whoami(root));
  });

  it('service accounts: ensured in kube-system, a TokenRequest token, no client certificate', async () => {
    const b = new ServiceAccountClientBuilder({
      root,
      clientOptions: { qps: 5, burst: 10 },
      userAgent: UA,
      log: logger('test'),
    });
    try {
      const c = await b.client('job-controller');
      assert.equal(await whoami(c), 'system:serviceaccount:kube-system:job-controller');
      assert.equal(c.rest.userAgent, `${UA}/job-controller`);
      await root.resource('serviceaccounts').namespace('kube-system').get('job-controller');
      // A second client of an existing account works too.
      const again = await b.client('job-controller');
      assert.equal(await whoami(again), 'system:serviceaccount:kube-system:job-controller');
    } finally {
      await b.close();
    }
  });

  it('the manager gives each controller --kube-api-qps/-burst in a limiter of its own, the scheduler --scheduler-kube-api-qps/-burst', async () => {
    const clients = new Map<string, Client>();
    const capture = (name: string): ControllerDescriptor => ({
      name,
      start: (ctx) => void clients.set(name, ctx.client),
    });
    const kcm = await startTestControllerManager(
      srv.kubeconfig,
      ['replicaset', 'deployment', 'scheduler'],
      {
        useServiceAccountCredentials: true,
        kubeApiQps: 300,
        kubeApiBurst: 600,
        schedulerKubeApiQps: 400,
        schedulerKubeApiBurst: 800,
      },
      ['replicaset', 'deployment', 'scheduler'].map(capture),
    );
    try {
      const [rs, deploy, sched] = ['replicaset', 'deployment', 'scheduler'].map((n) => clients.get(n)!);
      assert.notEqual(rs.rest.limiter, deploy.rest.limiter);
      for (const c of [rs, deploy]) {
        assert.equal(c.rest.limiter.qps, 300);
        assert.equal((c.rest.limiter as TokenBucket).burst, 600);
      }
      assert.equal(sched.rest.limiter.qps, 400);
      assert.equal((sched.rest.limiter as TokenBucket).burst, 800);
      assert.equal(await whoami(rs), 'system:serviceaccount:kube-system:replicaset-controller');
    } finally {
      await kcm.stop();
    }
  });
});
