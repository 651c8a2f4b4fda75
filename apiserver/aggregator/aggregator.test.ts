// The aggregation layer end to end in one apiserver: the published
// extension-apiserver-authentication ConfigMap, Local APIServices, and an
// extension apiserver (written here, TLS on 127.0.0.1, trusting the proxy's
// headers through that ConfigMap) reached through tkube by HTTP and by the real
// kubectl: get, watch, discovery, api-resources, and the caller seen as itself.
// The Service is an ExternalName "localhost": Kubernetes refuses loopback
// addresses in Endpoints and EndpointSlices, and resolves an ExternalName
// service to its name and the APIService's port (ResolveCluster).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createCA, createClientCert, createServingCert, type KeyPair } from '../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { kubectl, kubectlAvailable, kubectlStream } from '../../test-e2e/support/kubectl';
import { authConfigFrom, startExtensionServer, type ExtensionServer } from './extension-server.test-support';
import { callerOf } from '../../metrics-server/requestheader';
import { AUTH_CONFIGMAP_NAME } from './authentication-trust';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const GV = 'wardle.example.com/v1alpha1';
const FLUNDERS = `/apis/${GV}/namespaces/default/flunders`;
const RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [
    {
      name: 'flunders',
      singularName: 'flunder',
      namespaced: true,
      kind: 'Flunder',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['fl'],
    },
    { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get'] },
  ],
};
const FLUNDER_SCHEMA = {
  description: 'A Flunder is a test object of the wardle server.',
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: { reference: { type: 'string', description: 'What it refers to.' } },
    },
  },
  'x-kubernetes-group-version-kind': [{ group: 'wardle.example.com', version: 'v1alpha1', kind: 'Flunder' }],
};
const OPENAPI_V2 = {
  swagger: '2.0',
  info: { title: 'wardle', version: 'v0' },
  paths: { [`/apis/${GV}/namespaces/{namespace}/flunders`]: { get: { operationId: 'listFlunders' } } },
  definitions: { 'com.example.wardle.v1alpha1.Flunder': FLUNDER_SCHEMA },
};
const OPENAPI_V3 = {
  openapi: '3.0.0',
  info: { title: 'wardle', version: 'v0' },
  paths: {
    [`/apis/${GV}/namespaces/{namespace}/flunders`]: {
      get: {
        operationId: 'listFlunders',
        'x-kubernetes-group-version-kind': {
          group: 'wardle.example.com',
          version: 'v1alpha1',
          kind: 'Flunder',
        },
      },
    },
  },
  components: { schemas: { 'com.example.wardle.v1alpha1.Flunder': FLUNDER_SCHEMA } },
};
const flunder = (name: string, rv: string) => ({
  apiVersion: GV,
  kind: 'Flunder',
  metadata: { name, namespace: 'default', resourceVersion: rv, creationTimestamp: '2026-01-01T00:00:00Z' },
});

describe('aggregation layer', function () {
  this.timeout(120_000);
  let dir = '';
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let ext: ExtensionServer;
  let frontCA: KeyPair;
  const seen: { path: string; user: string; groups: string[] }[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-aggregator-'));
    mkdirSync(dir, { recursive: true });
    frontCA = await createCA('front-proxy-ca');
    const proxyClient = await createClientCert(frontCA, { commonName: 'front-proxy-client' });
    writeFileSync(join(dir, 'front-ca.crt'), frontCA.certPem);
    writeFileSync(join(dir, 'proxy.crt'), proxyClient.certPem);
    writeFileSync(join(dir, 'proxy.key'), proxyClient.keyPem);
    srv = await startTestAPIServer({
      requestheaderClientCaFile: join(dir, 'front-ca.crt'),
      requestheaderAllowedNames: ['front-proxy-client'],
      requestheaderUsernameHeaders: ['X-Remote-User'],
      requestheaderGroupHeaders: ['X-Remote-Group'],
      requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
      proxyClientCertFile: join(dir, 'proxy.crt'),
      proxyClientKeyFile: join(dir, 'proxy.key'),
    });
    api = testRequester(srv.config);
  });

  after(async () => {
    await ext?.close();
    await api?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes kube-system/extension-apiserver-authentication like kube-apiserver', async () => {
    const cm = await until(async () => {
      const r = await api('GET', `/api/v1/namespaces/kube-system/configmaps/${AUTH_CONFIGMAP_NAME}`);
      return r.status === 200 && r.json;
    }, 'the ConfigMap');
    const d = cm.data;
    assert.deepEqual(Object.keys(d).sort(), [
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-uid-headers',
      'requestheader-username-headers',
    ]);
    assert.equal(d['requestheader-allowed-names'], '["front-proxy-client"]');
    assert.equal(d['requestheader-username-headers'], '["X-Remote-User"]');
    assert.equal(d['requestheader-group-headers'], '["X-Remote-Group"]');
    assert.equal(d['requestheader-extra-headers-prefix'], '["X-Remote-Extra-"]');
    assert.equal(d['requestheader-uid-headers'], '[]');
    const b64 = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
    assert.equal(b64(d['requestheader-client-ca-file']), b64(frontCA.certPem));
    assert.equal(b64(d['client-ca-file']), b64(srv.config.caPem!));
  });

  it('rewrites the ConfigMap when the requestheader CA file changes', async () => {
    const second = await createCA('second-front-proxy-ca');
    writeFileSync(join(dir, 'front-ca.crt'), `${frontCA.certPem}${second.certPem}`);
    const b64 = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
    await until(async () => {
      const r = await api('GET', `/api/v1/namespaces/kube-system/configmaps/${AUTH_CONFIGMAP_NAME}`);
      return r.json?.data?.['requestheader-client-ca-file']?.includes(b64(second.certPem).slice(0, 60));
    }, 'the second CA in the ConfigMap');
  });

  it('lists a Local, Available APIService per served group/version', async () => {
    const list = await until(async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices');
      return r.json?.items?.length > 10 && r.json.items;
    }, 'local APIServices');
    const byName = new Map<string, any>(list.map((a: any) => [a.metadata.name, a]));
    for (const name of ['v1.', 'v1.apps', 'v1.apiregistration.k8s.io', 'v2.autoscaling']) {
      const a = byName.get(name);
      assert.ok(a, name);
      assert.equal(a.spec.service, undefined);
      assert.equal(a.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'onstart');
    }
    assert.equal(byName.get('v1.apps').spec.groupPriorityMinimum, 17800);
    assert.equal(byName.get('v1.apps').spec.versionPriority, 15);
    const apps = await until(async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.apps');
      return r.json?.status?.conditions?.length && r.json;
    }, 'v1.apps status');
    assert.equal(apps.status.conditions[0].type, 'Available');
    assert.equal(apps.status.conditions[0].status, 'True');
    assert.equal(apps.status.conditions[0].reason, 'Local');
    assert.equal(apps.status.conditions[0].message, 'Local APIServices are always available');
  });

  it('validates APIServices as kube-aggregator does', async () => {
    const r = await api('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      body: {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1.wrong.example.com' },
        spec: {
          group: 'bad.example.com',
          version: 'v1',
          groupPriorityMinimum: 0,
          versionPriority: 10,
          service: { namespace: 'default', name: 'x' },
          insecureSkipTLSVerify: true,
          caBundle: Buffer.from('pem').toString('base64'),
        },
      },
    });
    assert.equal(r.status, 422, r.body.toString());
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    assert.ok(
      causes.includes(
        'metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: "v1.bad.example.com"',
      ),
      causes.join('\n'),
    );
    assert.ok(
      causes.includes('spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000'),
      causes.join('\n'),
    );
    assert.ok(
      causes.includes(
        'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present',
      ),
      causes.join('\n'),
    );
  });

  it('adds and removes the APIService of a CRD group/version', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.toys.example.com' },
      spec: {
        group: 'toys.example.com',
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    const c = await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    assert.equal(c.status, 201, c.body.toString());
    const a = await until(async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.toys.example.com');
      return r.status === 200 && r.json;
    }, 'the CRD APIService');
    assert.equal(a.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'true');
    assert.equal(a.spec.groupPriorityMinimum, 1000);
    assert.equal(a.spec.versionPriority, 100);
    await api('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.toys.example.com');
    await until(async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.toys.example.com');
      return r.status === 404;
    }, 'the CRD APIService to go');
  });

  describe('an extension apiserver behind an APIService', () => {
    const watchers: import('node:http').ServerResponse[] = [];

    before(async () => {
      const cm = await api('GET', `/api/v1/namespaces/kube-system/configmaps/${AUTH_CONFIGMAP_NAME}`);
      const auth = authConfigFrom(cm.json.data);
      const servingCA = await createCA('wardle-ca');
      const serving = await createServingCert(servingCA, 'wardle', { dnsNames: ['wardle.default.svc'] });
      ext = await startExtensionServer(serving, auth, (req, res, caller) => {
        const url = new URL(req.url!, 'https://x');
        seen.push({ path: url.pathname, user: caller.name, groups: caller.groups });
        const json = (code: number, body: unknown) => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (url.pathname === `/apis/${GV}`) return json(200, RESOURCES);
        if (url.pathname === '/openapi/v2') return json(200, OPENAPI_V2);
        if (url.pathname === `/openapi/v3/apis/${GV}`) return json(200, OPENAPI_V3);
        if (url.pathname === FLUNDERS && url.searchParams.get('watch') === 'true') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(JSON.stringify({ type: 'ADDED', object: flunder('one', '1') }) + '\n');
          watchers.push(res);
          return;
        }
        if (url.pathname === FLUNDERS)
          return json(200, {
            apiVersion: GV,
            kind: 'FlunderList',
            metadata: { resourceVersion: '1' },
            items: [flunder('one', '1')],
          });
        if (url.pathname === `${FLUNDERS}/one`) return json(200, flunder('one', '1'));
        if (url.pathname === `/apis/${GV}/whoami`) return json(200, caller);
        json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
      });
      // Upgrades: answered 101 with the caller's name, then an echo of every byte.
      ext.server.on('upgrade', (req, socket) => {
        const caller = callerOf(req, auth);
        if (!caller) return socket.destroy();
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\n` +
            `X-Seen-User: ${caller.name}\r\n\r\n`,
        );
        socket.pipe(socket);
      });
      const svc = await api('POST', '/api/v1/namespaces/default/services', {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'wardle' },
          spec: { type: 'ExternalName', externalName: 'localhost' },
        },
      });
      assert.equal(svc.status, 201, svc.body.toString());
      const as = await api('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
        body: {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name: 'v1alpha1.wardle.example.com' },
          spec: {
            group: 'wardle.example.com',
            version: 'v1alpha1',
            groupPriorityMinimum: 1000,
            versionPriority: 15,
            service: { namespace: 'default', name: 'wardle', port: ext.port },
            caBundle: Buffer.from(servingCA.certPem).toString('base64'),
          },
        },
      });
      assert.equal(as.status, 201, as.body.toString());
      await until(async () => {
        const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.wardle.example.com');
        const c = r.json?.status?.conditions?.find((x: any) => x.type === 'Available');
        return c?.status === 'True' && c;
      }, 'the APIService to be available');
    });

    after(() => {
      for (const w of watchers) w.end();
    });

    it('is Available with reason Passed', async () => {
      const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.wardle.example.com');
      const c = r.json.status.conditions.find((x: any) => x.type === 'Available');
      assert.equal(c.reason, 'Passed');
      assert.equal(c.message, 'all checks passed');
    });

    it('proxies requests, naming the caller in the trusted headers', async () => {
      const got = await api('GET', `${FLUNDERS}/one`);
      assert.equal(got.status, 200, got.body.toString());
      assert.equal(got.json.metadata.name, 'one');
      const who = await api('GET', `/apis/${GV}/whoami`);
      assert.equal(who.status, 200);
      assert.equal(who.json.name, 'kubernetes-admin');
      assert.ok(who.json.groups.includes('system:masters'), JSON.stringify(who.json));
      // A forged header from the client is not passed on.
      const forged = await api('GET', `/apis/${GV}/whoami`, { headers: { 'X-Remote-User': 'mallory' } });
      assert.equal(forged.json.name, 'kubernetes-admin');
    });

    it('authenticates and authorizes before proxying, and passes on the impersonated user', async () => {
      const before = seen.length;
      const anonymous = testRequester({ ...srv.config, certPem: undefined, keyPem: undefined });
      const anon = await anonymous('GET', FLUNDERS);
      await anonymous.close();
      assert.equal(anon.status, 401, anon.body.toString());
      assert.equal(seen.length, before, 'the extension server was not called');
      const r = await api('GET', `/apis/${GV}/whoami`, {
        headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'devs' },
      });
      assert.equal(r.status, 200, r.body.toString());
      assert.equal(r.json.name, 'jane');
      assert.deepEqual(r.json.groups, ['devs', 'system:authenticated']);
    });

    it('merges the group into /apis and aggregated discovery', async () => {
      const list = await api('GET', '/apis');
      const g = list.json.groups.find((x: any) => x.name === 'wardle.example.com');
      assert.deepEqual(g?.preferredVersion, { groupVersion: GV, version: 'v1alpha1' });
      const group = await api('GET', '/apis/wardle.example.com');
      assert.equal(group.status, 200);
      assert.equal(group.json.kind, 'APIGroup');
      const agg = await api('GET', '/apis', {
        headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
      });
      const item = agg.json.items.find((x: any) => x.metadata.name === 'wardle.example.com');
      assert.ok(item, 'aggregated discovery lists the group');
      const res = item.versions[0].resources[0];
      assert.equal(res.resource, 'flunders');
      assert.equal(res.scope, 'Namespaced');
      assert.deepEqual(res.responseKind, {
        group: 'wardle.example.com',
        version: 'v1alpha1',
        kind: 'Flunder',
      });
      assert.equal(res.subresources[0].subresource, 'status');
      assert.equal(item.versions[0].freshness, 'Current');
    });

    it('merges its OpenAPI v2 and serves its v3 document', async () => {
      const v2 = await until(async () => {
        const r = await api('GET', '/openapi/v2');
        return r.json?.definitions?.['com.example.wardle.v1alpha1.Flunder'] && r.json;
      }, 'the aggregated v2 definitions');
      assert.ok(v2.paths[`/apis/${GV}/namespaces/{namespace}/flunders`]);
      assert.ok(v2.definitions['io.k8s.api.core.v1.Pod'], 'built-in definitions stay');
      const index = await api('GET', '/openapi/v3');
      const entry = index.json.paths[`apis/${GV}`];
      assert.ok(entry, 'the v3 index lists the group-version');
      const doc = await api('GET', entry.serverRelativeURL);
      assert.equal(doc.status, 200);
      assert.deepEqual(doc.json, OPENAPI_V3);
    });

    it('streams a watch through', async () => {
      const ac = new AbortController();
      const { Agent, request } = await import('undici');
      const dispatcher = new Agent({
        connect: { ca: srv.config.caPem, cert: srv.config.certPem, key: srv.config.keyPem },
      });
      try {
        const r = await request(`${srv.url}${FLUNDERS}?watch=true`, { dispatcher, signal: ac.signal });
        assert.equal(r.statusCode, 200);
        const it = r.body[Symbol.asyncIterator]();
        let text = String((await it.next()).value);
        assert.match(text, /"type":"ADDED"/);
        const w = await until(async () => watchers[watchers.length - 1], 'the watcher upstream');
        w.write(JSON.stringify({ type: 'MODIFIED', object: flunder('one', '2') }) + '\n');
        while (!text.includes('MODIFIED')) text += String((await it.next()).value);
        assert.match(text, /"resourceVersion":"2"/);
      } finally {
        ac.abort();
        await dispatcher.close().catch(() => {});
      }
    });

    it('passes upgraded connections through, both ways', async () => {
      const { connect } = await import('node:tls');
      const sock = connect({
        host: '127.0.0.1',
        port: srv.port,
        ca: srv.config.caPem,
        cert: srv.config.certPem,
        key: srv.config.keyPem,
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
      });
      try {
        await new Promise<void>((r, j) => sock.once('secureConnect', r).once('error', j));
        let got = '';
        sock.on('data', (d) => (got += d));
        sock.write(
          `POST ${FLUNDERS}/one/attach HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
        );
        await until(async () => got.includes('\r\n\r\n'), 'the 101');
        assert.match(got, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
        assert.match(got, /X-Seen-User: kubernetes-admin\r\n/i);
        sock.write('ping-through');
        await until(async () => got.endsWith('ping-through'), 'the echo');
      } finally {
        sock.destroy();
      }
    });

    it('answers other upgrade requests through the usual chain, on their socket', async () => {
      const { connect } = await import('node:tls');
      const raw = async (cert: boolean) => {
        const sock = connect({
          host: '127.0.0.1',
          port: srv.port,
          ca: srv.config.caPem,
          ...(cert ? { cert: srv.config.certPem, key: srv.config.keyPem } : {}),
          servername: 'localhost',
          ALPNProtocols: ['http/1.1'],
        });
        let got = '';
        sock.on('data', (d) => (got += d));
        await new Promise<void>((r, j) => sock.once('secureConnect', r).once('error', j));
        sock.write(
          'GET /api/v1/namespaces/default HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n',
        );
        await new Promise((r) => sock.once('close', r));
        return got;
      };
      const ok = await raw(true);
      assert.match(ok, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(ok, /"kind":"Namespace"/);
      const anon = await raw(false);
      assert.match(anon, /^HTTP\/1\.1 401 Unauthorized\r\n/);
    });

    it('works with the real kubectl: get, api-resources, get --watch', async function () {
      if (!kubectlAvailable()) this.skip();
      const get = await kubectl(srv.kubeconfig, ['get', 'flunders.wardle.example.com', '-n', 'default']);
      assert.equal(get.code, 0, get.stderr);
      assert.match(get.stdout, /^NAME\s/m);
      assert.match(get.stdout, /^one\s/m);
      const short = await kubectl(srv.kubeconfig, ['get', 'fl', 'one', '-n', 'default', '-o', 'name']);
      assert.equal(short.stdout.trim(), 'flunder.wardle.example.com/one', short.stderr);
      const ar = await kubectl(srv.kubeconfig, ['api-resources', '--api-group', 'wardle.example.com']);
      assert.equal(ar.code, 0, ar.stderr);
      assert.match(ar.stdout, /^flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder$/m);
      const explain = await kubectl(srv.kubeconfig, ['explain', 'flunders.spec.reference']);
      assert.equal(explain.code, 0, explain.stderr);
      assert.match(explain.stdout, /What it refers to\./);
      const apisvc = await kubectl(srv.kubeconfig, ['get', 'apiservices']);
      assert.match(apisvc.stdout, /^v1alpha1\.wardle\.example\.com\s+default\/wardle\s+True\s/m);
      assert.match(apisvc.stdout, /^v1\.apps\s+Local\s+True\s/m);
      const w = kubectlStream(srv.kubeconfig, ['get', 'flunders', '-n', 'default', '--watch', '-o', 'name']);
      try {
        await until(async () => /flunder.*\/one/.test(w.output()), 'kubectl --watch output', 30_000);
      } finally {
        await w.stop();
      }
    });

    it('turns unavailable when its Service goes: 503, and counted', async () => {
      const gauge = /^aggregator_unavailable_apiservice\{name="v1alpha1\.wardle\.example\.com"\} (\d)$/m;
      const before = (await api('GET', '/metrics')).body.toString();
      assert.equal(gauge.exec(before)?.[1], '0');
      const del = await api('DELETE', '/api/v1/namespaces/default/services/wardle');
      assert.equal(del.status, 200);
      await until(async () => {
        const r = await api('GET', `${FLUNDERS}/one`);
        return r.status === 503 && r;
      }, '503');
      const metrics = (await api('GET', '/metrics')).body.toString();
      assert.equal(gauge.exec(metrics)?.[1], '1');
      assert.match(
        metrics,
        /^aggregator_unavailable_apiservice_total\{name="v1alpha1\.wardle\.example\.com",reason="ServiceNotFound"\} 1$/m,
      );
    });
  });

  describe('an APIService whose service has no endpoints', () => {
    before(async () => {
      const svc = await api('POST', '/api/v1/namespaces/default/services', {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'empty' },
          spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] },
        },
      });
      assert.equal(svc.status, 201, svc.body.toString());
      // What the endpointslice controller writes for a service nothing backs.
      const slice = await api('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        body: {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'empty-abcde', labels: { 'kubernetes.io/service-name': 'empty' } },
          addressType: 'IPv4',
          endpoints: [],
          ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
        },
      });
      assert.equal(slice.status, 201, slice.body.toString());
      const as = await api('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
        body: {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name: 'v1beta1.missing.example.com' },
          spec: {
            group: 'missing.example.com',
            version: 'v1beta1',
            groupPriorityMinimum: 100,
            versionPriority: 10,
            service: { namespace: 'default', name: 'empty' },
            insecureSkipTLSVerify: true,
          },
        },
      });
      assert.equal(as.status, 201, as.body.toString());
    });

    it('is Available=False with reason MissingEndpoints, and its group answers 503', async () => {
      const c = await until(async () => {
        const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.missing.example.com');
        return r.json?.status?.conditions?.find((x: any) => x.type === 'Available');
      }, 'a condition');
      assert.equal(c.status, 'False');
      assert.equal(c.reason, 'MissingEndpoints');
      assert.equal(
        c.message,
        'endpointslices for service/empty in "default" have no addresses with port name "https"',
      );
      const r = await api('GET', '/apis/missing.example.com/v1beta1/things');
      assert.equal(r.status, 503);
      assert.equal(r.body.toString(), 'service unavailable\n');
      const metrics = (await api('GET', '/metrics')).body.toString();
      assert.match(
        metrics,
        /^aggregator_unavailable_apiservice\{name="v1beta1\.missing\.example\.com"\} 1$/m,
      );
      // Legacy discovery still lists the group: clients report it as unable to handle the request.
      const list = await api('GET', '/apis');
      assert.ok(list.json.groups.some((g: any) => g.name === 'missing.example.com'));
    });

    it('says ServiceNotFound when the service goes', async () => {
      await api('DELETE', '/api/v1/namespaces/default/services/empty');
      const c = await until(async () => {
        const r = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.missing.example.com');
        const c = r.json?.status?.conditions?.find((x: any) => x.type === 'Available');
        return c?.reason === 'ServiceNotFound' && c;
      }, 'ServiceNotFound');
      assert.equal(c.message, 'service/empty in "default" is not present');
    });
  });
});
