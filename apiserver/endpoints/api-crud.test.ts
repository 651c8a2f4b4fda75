// The resource API over real HTTPS: verbs, server-owned metadata, optimistic
// concurrency, dry-run, finalizers and graceful deletion (SPEC.md "What the
// service does", "States and transitions").
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, withTestAPIServer, type TestAPIServer } from '../server/testing';

describe('resource API: verbs and object lifecycle', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  });

  it('creates with server-owned metadata and refuses a second create', async () => {
    const r = await api('POST', cms, { body: cm('one') });
    assert.equal(r.status, 201);
    const md = r.json.metadata;
    assert.match(md.uid, /^[0-9a-f-]{36}$/);
    assert.match(md.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(md.resourceVersion, /^\d+$/);
    assert.equal(md.namespace, 'default');
    const again = await api('POST', cms, { body: cm('one') });
    assert.equal(again.status, 409);
    assert.equal(again.json.reason, 'AlreadyExists');
    assert.equal(again.json.message, 'configmaps "one" already exists');
    assert.deepEqual(again.json.details, { name: 'one', kind: 'configmaps' });
  });

  it('gets, and answers NotFound as a Status', async () => {
    const r = await api('GET', `${cms}/one`);
    assert.equal(r.status, 200);
    assert.equal(r.json.data.a, '1');
    const nf = await api('GET', `${cms}/nope`);
    assert.equal(nf.status, 404);
    assert.equal(nf.json.kind, 'Status');
    assert.equal(nf.json.status, 'Failure');
    assert.equal(nf.json.reason, 'NotFound');
    assert.equal(nf.json.message, 'configmaps "nope" not found');
  });

  it('generates names from generateName', async () => {
    const r = await api('POST', cms, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } },
    });
    assert.equal(r.status, 201);
    assert.match(r.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('updates with optimistic concurrency: a stale resourceVersion is a 409 Conflict', async () => {
    const cur = (await api('GET', `${cms}/one`)).json;
    const ok = await api('PUT', `${cms}/one`, { body: { ...cur, data: { a: '2' } } });
    assert.equal(ok.status, 200);
    assert.notEqual(ok.json.metadata.resourceVersion, cur.metadata.resourceVersion);
    assert.equal(ok.json.metadata.uid, cur.metadata.uid);
    assert.equal(ok.json.metadata.creationTimestamp, cur.metadata.creationTimestamp);
    const stale = await api('PUT', `${cms}/one`, { body: { ...cur, data: { a: '3' } } });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
    assert.match(
      stale.json.message,
      /the object has been modified; please apply your changes to the latest version and try again/,
    );
  });

  it('applies every unconditional update and merge patch of one object, however many race', async () => {
    await api('POST', cms, { body: cm('contended') });
    // More concurrent writers than a bounded retry would survive: each batch commit lets one win.
    const writers = 150;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        i % 2
          ? api('PUT', `${cms}/contended`, { body: { ...cm('contended'), data: { [`k${i}`]: 'put' } } })
          : api('PATCH', `${cms}/contended`, {
              body: { data: { [`k${i}`]: 'patch' } },
              contentType: 'application/merge-patch+json',
            }),
      ),
    );
    assert.deepEqual(
      results.filter((r) => r.status !== 200).map((r) => r.json?.message),
      [],
    );
    const rvs = new Set(results.map((r) => r.json.metadata.resourceVersion));
    assert.equal(rvs.size, writers, 'each write is its own revision');
  });

  it('does not bump resourceVersion on an update that changes nothing', async () => {
    const cur = (await api('GET', `${cms}/one`)).json;
    const same = await api('PUT', `${cms}/one`, { body: cur });
    assert.equal(same.status, 200);
    assert.equal(same.json.metadata.resourceVersion, cur.metadata.resourceVersion);
  });

  it('PUT does not create types that do not allow it, and creates those that do', async () => {
    const r = await api('PUT', `${cms}/absent`, { body: cm('absent') });
    assert.equal(r.status, 404);
    const ep = await api('PUT', '/api/v1/namespaces/default/endpoints/made-by-put', {
      body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'made-by-put' } },
    });
    assert.equal(ep.status, 201);
  });

  it('patches with merge patch and JSON patch', async () => {
    const m = await api('PATCH', `${cms}/one`, {
      body: { data: { b: 'x' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(m.status, 200);
    assert.deepEqual(m.json.data, { a: '2', b: 'x' });
    const j = await api('PATCH', `${cms}/one`, {
      body: [
        { op: 'test', path: '/data/b', value: 'x' },
        { op: 'remove', path: '/data/b' },
      ],
      contentType: 'application/json-patch+json',
    });
    assert.equal(j.status, 200);
    assert.deepEqual(j.json.data, { a: '2' });
    const failed = await api('PATCH', `${cms}/one`, {
      body: [{ op: 'test', path: '/data/a', value: 'nope' }],
      contentType: 'application/json-patch+json',
    });
    assert.ok(failed.status >= 400 && failed.status < 500, `status ${failed.status}`);
    assert.equal((await api('GET', `${cms}/one`)).json.data.a, '2');
  });

  it('dry-run runs every stage but the write', async () => {
    const c = await api('POST', `${cms}?dryRun=All`, { body: cm('dry') });
    assert.equal(c.status, 201);
    assert.equal(c.json.metadata.name, 'dry');
    assert.equal((await api('GET', `${cms}/dry`)).status, 404);
    const before = (await api('GET', `${cms}/one`)).json;
    const p = await api('PATCH', `${cms}/one?dryRun=All`, {
      body: { data: { z: '1' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(p.status, 200);
    assert.equal(p.json.data.z, '1');
    const after = (await api('GET', `${cms}/one`)).json;
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.data.z, undefined);
    const d = await api('DELETE', `${cms}/one?dryRun`);
    assert.equal(d.status, 200);
    assert.equal((await api('GET', `${cms}/one`)).status, 200);
    const bad = await api('POST', `${cms}?dryRun=Some`, { body: cm('dry2') });
    assert.equal(bad.status, 400);
  });

  it('deletes in two phases while finalizers remain, and removes the object with the last one', async () => {
    await api('POST', cms, {
      body: { ...cm('fin'), metadata: { name: 'fin', finalizers: ['example.com/a', 'example.com/b'] } },
    });
    const d = await api('DELETE', `${cms}/fin`);
    assert.equal(d.status, 200);
    assert.equal(d.json.kind, 'ConfigMap');
    assert.ok(d.json.metadata.deletionTimestamp);
    assert.equal(d.json.metadata.deletionGracePeriodSeconds, 0);
    const p1 = await api('PATCH', `${cms}/fin`, {
      body: { metadata: { finalizers: ['example.com/b'] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(p1.status, 200);
    assert.equal((await api('GET', `${cms}/fin`)).status, 200);
    const p2 = await api('PATCH', `${cms}/fin`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(p2.status, 200);
    assert.equal((await api('GET', `${cms}/fin`)).status, 404);
  });

  it('deletes without finalizers at once with a Success Status, honouring preconditions', async () => {
    const c = (await api('POST', cms, { body: cm('gone') })).json;
    const pre = await api('DELETE', `${cms}/gone`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'wrong' } },
    });
    assert.equal(pre.status, 409);
    assert.match(pre.json.message, /Precondition failed: UID in precondition: wrong/);
    const d = await api('DELETE', `${cms}/gone`, { body: { preconditions: { uid: c.metadata.uid } } });
    assert.equal(d.status, 200);
    assert.equal(d.json.kind, 'Status');
    assert.equal(d.json.status, 'Success');
    assert.deepEqual(d.json.details, { name: 'gone', kind: 'configmaps', uid: c.metadata.uid });
    assert.equal((await api('DELETE', `${cms}/gone`)).status, 404);
  });

  it('deletes a collection by label selector', async () => {
    for (const n of ['dc1', 'dc2', 'dc3']) {
      await api('POST', cms, {
        body: { ...cm(n), metadata: { name: n, labels: { del: n === 'dc3' ? 'no' : 'yes' } } },
      });
    }
    const r = await api('DELETE', `${cms}?labelSelector=del%3Dyes`);
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'ConfigMapList');
    assert.deepEqual(r.json.items.map((i: any) => i.metadata.name).sort(), ['dc1', 'dc2']);
    assert.equal((await api('GET', `${cms}/dc1`)).status, 404);
    assert.equal((await api('GET', `${cms}/dc3`)).status, 200);
  });

  it('deletes bound pods gracefully and unbound pods at once', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const pod = (name: string, nodeName?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        ...(nodeName ? { nodeName } : {}),
        terminationGracePeriodSeconds: 30,
        containers: [{ name: 'c', image: 'busybox' }],
      },
    });
    assert.equal((await api('POST', pods, { body: pod('unbound') })).status, 201);
    const d1 = await api('DELETE', `${pods}/unbound`);
    assert.equal(d1.status, 200);
    assert.equal((await api('GET', `${pods}/unbound`)).status, 404);
    assert.equal((await api('POST', pods, { body: pod('bound', 'node-1') })).status, 201);
    const d2 = await api('DELETE', `${pods}/bound`);
    assert.equal(d2.status, 200);
    assert.equal(d2.json.metadata.deletionGracePeriodSeconds, 30);
    const ts = Date.parse(d2.json.metadata.deletionTimestamp);
    assert.ok(ts > Date.now() + 20_000, 'deletionTimestamp is now + grace period');
    assert.equal((await api('GET', `${pods}/bound`)).status, 200);
    const force = await api('DELETE', `${pods}/bound?gracePeriodSeconds=0`);
    assert.equal(force.status, 200);
    assert.equal((await api('GET', `${pods}/bound`)).status, 404);
  });

  it('bumps generation on spec changes only', async () => {
    const deps = '/apis/apps/v1/namespaces/default/deployments';
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    const c = await api('POST', deps, { body: dep });
    assert.equal(c.status, 201);
    assert.equal(c.json.metadata.generation, 1);
    const l = await api('PATCH', `${deps}/web`, {
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(l.json.metadata.generation, 1);
    const s = await api('PATCH', `${deps}/web`, {
      body: { spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(s.json.metadata.generation, 2);
    // The main resource ignores status; /status ignores the rest.
    const st = await api('PATCH', `${deps}/web`, {
      body: { status: { replicas: 9 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(st.json.status?.replicas, undefined);
    const st2 = await api('PATCH', `${deps}/web/status`, {
      body: { status: { replicas: 9 }, spec: { replicas: 7 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(st2.status, 200);
    assert.equal(st2.json.status.replicas, 9);
    assert.equal(st2.json.spec.replicas, 3);
    assert.equal(st2.json.metadata.generation, 2);
    const scale = await api('GET', `${deps}/web/scale`);
    assert.equal(scale.json.kind, 'Scale');
    assert.equal(scale.json.spec.replicas, 3);
    assert.equal(scale.json.status.selector, 'app=web');
    const sc = await api('PATCH', `${deps}/web/scale`, {
      body: { spec: { replicas: 5 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(sc.status, 200);
    assert.equal(sc.json.spec.replicas, 5);
    assert.equal((await api('GET', `${deps}/web`)).json.spec.replicas, 5);
  });

  it('refuses creates in a missing or terminating namespace', async () => {
    const missing = await api('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('x') });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'namespaces "nowhere" not found');
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } },
    });
    const del = await api('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.status, 200);
    assert.equal(del.json.status.phase, 'Terminating');
    const term = await api('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('x') });
    assert.equal(term.status, 403);
    assert.match(term.json.message, /because it is being terminated/);
    assert.equal((await api('DELETE', '/api/v1/namespaces/kube-system')).status, 403);
    // The namespace controller's last step: clear spec.finalizers through /finalize.
    const ns = (await api('GET', '/api/v1/namespaces/doomed')).json;
    const fin = await api('PUT', '/api/v1/namespaces/doomed/finalize', {
      body: { ...ns, spec: { finalizers: [] } },
    });
    assert.equal(fin.status, 200);
    assert.equal((await api('GET', '/api/v1/namespaces/doomed')).status, 404);
  });

  it('binds a pod to a node through pods/binding', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    await api('POST', pods, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'tobind' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
    });
    const b = await api('POST', `${pods}/tobind/binding`, {
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'tobind' },
        target: { apiVersion: 'v1', kind: 'Node', name: 'n1' },
      },
    });
    assert.equal(b.status, 201);
    const p = (await api('GET', `${pods}/tobind`)).json;
    assert.equal(p.spec.nodeName, 'n1');
    assert.equal(p.status.conditions.find((c: any) => c.type === 'PodScheduled').status, 'True');
    const again = await api('POST', `${pods}/tobind/binding`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'tobind' }, target: { name: 'n2' } },
    });
    assert.equal(again.status, 409);
  });

  it('allocates service cluster IPs and node ports without duplicates', async () => {
    const svcs = '/api/v1/namespaces/default/services';
    const svc = (name: string, type = 'ClusterIP', nodePort?: number) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: {
        type,
        ports: [{ port: 80, targetPort: 8080, protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }],
      },
    });
    const a = await api('POST', svcs, { body: svc('a') });
    const b = await api('POST', svcs, { body: svc('b', 'NodePort') });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.match(a.json.spec.clusterIP, /^10\.0\.0\.\d+$/);
    assert.notEqual(a.json.spec.clusterIP, b.json.spec.clusterIP);
    const np = b.json.spec.ports[0].nodePort;
    assert.ok(np >= 30000 && np <= 32767);
    const dup = await api('POST', svcs, { body: svc('c', 'NodePort', np) });
    assert.equal(dup.status, 422);
    assert.match(dup.json.message, /provided port is already allocated/);
    const k = (await api('GET', `${svcs}/kubernetes`)).json;
    assert.equal(k.spec.clusterIP, '10.0.0.1');
  });

  it("hands out the lower 16 addresses of a service range (kube-dns's .10) only once the upper part is full", async () => {
    // A /27: .1-.16 the static part, .17-.30 the upper one.
    await withTestAPIServer({ serviceClusterIpRange: '10.0.0.0/27' }, async (api27) => {
      const svcs = '/api/v1/namespaces/default/services';
      const svc = (name: string, clusterIP?: string) => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: { ...(clusterIP ? { clusterIP } : {}), ports: [{ port: 53, protocol: 'UDP' }] },
      });
      const last = (r: any) => Number(r.json.spec.clusterIP.split('.')[3]);
      const upper: number[] = [];
      for (let i = 0; i < 14; i++) {
        const r = await api27('POST', svcs, { body: svc(`s${i}`) });
        assert.equal(r.status, 201, JSON.stringify(r.json));
        upper.push(last(r));
      }
      assert.deepEqual(
        upper.sort((a, b) => a - b),
        Array.from({ length: 14 }, (_, i) => 17 + i),
      );
      const dns = await api27('POST', svcs, { body: svc('kube-dns', '10.0.0.10') });
      assert.equal(dns.status, 201, JSON.stringify(dns.json));
      const lower = await api27('POST', svcs, { body: svc('lower') });
      assert.equal(lower.status, 201);
      assert.ok(last(lower) >= 2 && last(lower) <= 16 && last(lower) !== 10, lower.json.spec.clusterIP);
    });
  });
});
