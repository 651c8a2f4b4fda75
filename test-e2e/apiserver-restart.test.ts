// The apiserver process keeps every acknowledged write across restarts:
// a graceful restart, and SIGKILL in the middle of 16 concurrent writers.
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { freePort, startAPIServerProcess, tempDir, type APIServerProc } from './support/processes';
import { rmSync } from 'node:fs';

function client(kubeconfig: string) {
  const c = loadKubeconfig(kubeconfig);
  const dispatcher = new Agent({ connect: { ca: c.caPem, cert: c.certPem, key: c.keyPem }, connections: 32 });
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await request(c.server + path, {
      method: method as any,
      dispatcher,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    const text = await r.body.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.statusCode, json };
  };
  return Object.assign(call, { close: () => dispatcher.close() });
}

describe('apiserver restarts', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const procs: APIServerProc[] = [];
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('comes back ready on the same data dir after a graceful stop, with every object', async () => {
    const dir = tempDir('restart');
    dirs.push(dir);
    const port = await freePort();
    const first = await startAPIServerProcess({ dir, port });
    procs.push(first);
    const api = client(first.kubeconfig);
    await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'keep' },
    });
    await api('POST', '/api/v1/namespaces/keep/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1' },
    });
    await api('POST', '/api/v1/namespaces/keep/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { type: 'NodePort', ports: [{ port: 80 }] },
    });
    const svc = (await api('GET', '/api/v1/namespaces/keep/services/s')).json;
    await api.close();
    assert.equal(await first.stop('SIGTERM'), 0);

    const second = await startAPIServerProcess({ dir, port });
    procs.push(second);
    const api2 = client(second.kubeconfig);
    try {
      assert.equal((await api2('GET', '/readyz')).status, 200);
      assert.equal((await api2('GET', '/api/v1/namespaces/keep/configmaps/c')).json.data.a, '1');
      const again = (await api2('GET', '/api/v1/namespaces/keep/services/s')).json;
      assert.equal(again.spec.clusterIP, svc.spec.clusterIP);
      assert.equal(again.spec.ports[0].nodePort, svc.spec.ports[0].nodePort);
      assert.equal(
        (await api2('GET', '/api/v1/namespaces/default/services/kubernetes')).json.spec.clusterIP,
        '10.0.0.1',
      );
    } finally {
      await api2.close();
      await second.stop();
    }
  });

  it('loses no acknowledged write when killed with SIGKILL under 16 concurrent writers', async () => {
    const dir = tempDir('sigkill');
    dirs.push(dir);
    const port = await freePort();
    const first = await startAPIServerProcess({ dir, port });
    procs.push(first);
    const api = client(first.kubeconfig);
    const acknowledged = new Set<string>();
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        try {
          const r = await api('POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name },
            data: { i: String(i) },
          });
          if (r.status === 201) acknowledged.add(name);
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 16 }, (_, w) => writer(w));
    // Killed once writes are under way (a count, not a time: a slow machine acknowledges fewer a second).
    for (let t = Date.now(); acknowledged.size <= 50 && Date.now() - t < 30_000;)
      await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await api.close();
    assert.ok(acknowledged.size > 50, `only ${acknowledged.size} writes acknowledged before the kill`);

    const second = await startAPIServerProcess({ dir, port });
    procs.push(second);
    const api2 = client(second.kubeconfig);
    try {
      const list = (await api2('GET', '/api/v1/namespaces/default/configmaps')).json;
      const stored = new Set<string>(list.items.map((i: any) => i.metadata.name));
      const missing = [...acknowledged].filter((n) => !stored.has(n));
      assert.deepEqual(missing, [], `${missing.length} acknowledged writes lost`);
    } finally {
      await api2.close();
      await second.stop();
    }
  });
});
