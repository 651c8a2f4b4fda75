// Service-backed webhooks, conversion webhooks and APIServices reached at a
// ready endpoint of their Service, never at its ClusterIP (no service proxy
// makes it local; the host would route it off the machine). As in Kubernetes'
// AdmissionWebhook conformance specs: a CA made like cert.NewSelfSignedCACert, a
// leaf it signs for <svc>.<ns>.svc served by a "pod" (here an HTTPS server on
// 127.0.0.1:P) behind a Service on 8443 whose targetPort is P. The Service
// CIDR is one of this process's, routed unreachable first: a dial of the
// ClusterIP fails at once on the host (root only; without the route a wrong
// dial could leave the machine, so the tests do not run).
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { localHTTPS, type LocalHTTPS } from '../auth/admission/test-support';
import { crd, establish, until } from '../registry/crd/test-support';
import { goSelfSignedCA, goSignedServingCert } from '../../shared/pki/go-certs.test-support';
import { installUnreachableRoutes, removeUnreachableRoutes } from '../../shared/cluster/service-route';
import { routedUnreachable, testServiceCIDR } from '../../shared/cluster/service-route.test-support';

const NS = 'default';
const SVC = 'e2e-test-webhook';
const SERVER_NAME = `${SVC}.${NS}.svc`;
const GV = 'things.example.com/v1alpha1';

describe('services reached at a ready endpoint', function () {
  this.timeout(60_000);
  const { cidr, address } = testServiceCIDR(28);
  let srv: TestAPIServer | undefined;
  let api: ReturnType<typeof testRequester>;
  let pod: LocalHTTPS | undefined;
  let caBundle = '';
  /** What the pod was asked: path and the TLS server name the caller sent. */
  const calls: { path: string; servername: string | false | null }[] = [];

  const service = { namespace: NS, name: SVC, port: 8443 };

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    const routes = installUnreachableRoutes(cidr);
    assert.deepEqual(routes.installed, [cidr], routes.skipped.join('; '));
    assert.ok(routedUnreachable(address), `${address} must be routed unreachable before anything runs`);

    const ca = await goSelfSignedCA('e2e-server-cert-ca');
    caBundle = Buffer.from(ca.certPem).toString('base64');
    const serving = await goSignedServingCert(ca, SERVER_NAME, [SERVER_NAME]);
    pod = await localHTTPS(ca, async (body, req) => podAnswer(body, req), serving);
    srv = await startTestAPIServer({ serviceClusterIpRange: cidr });
    api = testRequester(srv.config);

    const port = (pod.server.address() as AddressInfo).port;
    const svc = await api('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: SVC },
        spec: { ports: [{ protocol: 'TCP', port: 8443, targetPort: port }] },
      },
    });
    assert.equal(svc.status, 201, svc.body.toString());
    // Its ClusterIP is in the unreachable range: a call sent there fails loudly.
    assert.ok(routedUnreachable(svc.json.spec.clusterIP), svc.json.spec.clusterIP);
    const slice = await api('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${SVC}-abcde`, labels: { 'kubernetes.io/service-name': SVC } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
        ports: [{ name: '', protocol: 'TCP', port }],
      },
    });
    assert.equal(slice.status, 201, slice.body.toString());
  });

  after(async () => {
    await api?.close();
    await srv?.stop();
    await pod?.close();
    removeUnreachableRoutes(cidr);
  });

  /** The webhook pod: mutation, conversion and an aggregated API group. */
  function podAnswer(body: any, req: import('node:http').IncomingMessage) {
    const url = new URL(req.url ?? '/', 'https://pod');
    calls.push({ path: url.pathname, servername: (req.socket as TLSSocket).servername });
    if (url.pathname === '/mutate') {
      const patch = [{ op: 'add', path: '/data/mutation-stage-1', value: 'yes' }];
      return Promise.resolve({
        body: {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: body.request.uid,
            allowed: true,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          },
        },
      });
    }
    if (url.pathname === '/crdconvert') {
      const { uid, desiredAPIVersion, objects } = body.request;
      const convertedObjects = objects.map((o: any) => ({
        ...o,
        apiVersion: desiredAPIVersion,
        spec: desiredAPIVersion.endsWith('/v2') ? { size: `${o.spec.size}` } : { size: Number(o.spec.size) },
      }));
      return Promise.resolve({
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: { uid, result: { status: 'Success' }, convertedObjects },
        },
      });
    }
    if (url.pathname === `/apis/${GV}`)
      return Promise.resolve({
        body: {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: GV,
          resources: [
            { name: 'things', singularName: 'thing', namespaced: true, kind: 'Thing', verbs: ['get'] },
          ],
        },
      });
    return Promise.resolve({ status: 404, body: { kind: 'Status', apiVersion: 'v1', code: 404 } });
  }

  const callsTo = (path: string) => calls.filter((c) => c.path === path);

  it('calls an admission webhook at its pod (TLS for <svc>.<ns>.svc) and applies its answer', async () => {
    const r = await api('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'adding-configmap-data-stage-1' },
        webhooks: [
          {
            name: 'adding-configmap-data-stage-1.k8s.io',
            admissionReviewVersions: ['v1', 'v1beta1'],
            sideEffects: 'None',
            rules: [
              { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
            ],
            clientConfig: { service: { ...service, path: '/mutate' }, caBundle },
          },
        ],
      },
    });
    assert.equal(r.status, 201, r.body.toString());
    let n = 0;
    // The configuration and the Service's endpoints are read through caches: the specs poll too.
    const created = await until(async () => {
      const c = await api('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n++}` }, data: { a: '1' } },
      });
      assert.equal(c.status, 201, c.body.toString());
      return c.json.data['mutation-stage-1'] === 'yes' && c.json;
    }, 'the mutating webhook to apply');
    assert.deepEqual(created.data, { a: '1', 'mutation-stage-1': 'yes' });
    assert.ok(callsTo('/mutate').length >= 1);
    assert.ok(callsTo('/mutate').every((c) => c.servername === SERVER_NAME));
  });

  it('fails a call to a Service with no endpoints as Kubernetes does (503 from the resolver), dialling nothing', async () => {
    const svc = await api('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'no-pods' },
        spec: { ports: [{ port: 443 }] },
      },
    });
    assert.equal(svc.status, 201, svc.body.toString());
    const path = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
    const r = await api('POST', path, {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'no-pods' },
        webhooks: [
          {
            name: 'no-pods.k8s.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }],
            clientConfig: { service: { namespace: NS, name: 'no-pods', path: '/validate' }, caBundle },
          },
        ],
      },
    });
    assert.equal(r.status, 201, r.body.toString());
    let n = 0;
    const failed = await until(async () => {
      const c = await api('POST', `/api/v1/namespaces/${NS}/secrets`, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s-${n++}` } },
      });
      return c.status !== 201 && c.json;
    }, 'the validating webhook to be called');
    assert.equal(failed.code, 500);
    assert.equal(
      failed.message,
      'Internal error occurred: failed calling webhook "no-pods.k8s.io": failed to call webhook: ' +
        `Post "https://no-pods.${NS}.svc:443/validate?timeout=10s": no endpoints available for service "no-pods"`,
    );
    await api('DELETE', `${path}/no-pods`);
  });

  /** A CRD of two versions (spec.size an integer in v1, a string in v2) converted by a webhook at ref. */
  async function conversionCRD(plural: string, kind: string, ref: Record<string, unknown>) {
    const schema = (size: string) => ({
      openAPIV3Schema: {
        type: 'object',
        properties: { spec: { type: 'object', properties: { size: { type: size } } } },
      },
    });
    const obj = crd({
      group: 'stable.example.com',
      plural,
      kind,
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema('integer') },
        { name: 'v2', served: true, storage: false, schema: schema('string') },
      ],
    });
    obj.spec.conversion = {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { service: ref, caBundle } },
    };
    await establish(api, obj);
    return `/apis/stable.example.com/%s/namespaces/${NS}/${plural}`;
  }

  it('calls a CRD conversion webhook at its pod', async () => {
    const base = await conversionCRD('e2e-test-crds', 'E2eTestCrd', { ...service, path: '/crdconvert' });
    const c = await api('POST', base.replace('%s', 'v1'), {
      body: {
        apiVersion: 'stable.example.com/v1',
        kind: 'E2eTestCrd',
        metadata: { name: 'one' },
        spec: { size: 3 },
      },
    });
    assert.equal(c.status, 201, c.body.toString());
    const got = await until(async () => {
      const g = await api('GET', `${base.replace('%s', 'v2')}/one`);
      return g.status === 200 && g.json;
    }, 'the object read as v2');
    assert.equal(got.apiVersion, 'stable.example.com/v2');
    assert.deepEqual(got.spec, { size: '3' });
    assert.ok(callsTo('/crdconvert').length >= 1);
    assert.ok(callsTo('/crdconvert').every((x) => x.servername === SERVER_NAME));
  });

  it("names a conversion webhook's service with its port when its pod refuses the connection", async () => {
    // A port nothing listens on any more.
    const listener = net.createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const closed = (listener.address() as AddressInfo).port;
    await new Promise((r) => listener.close(r));
    const svc = await api('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'refusing' },
        spec: { ports: [{ port: 443 }] },
      },
    });
    assert.equal(svc.status, 201, svc.body.toString());
    const slice = await api('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'refusing-abcde', labels: { 'kubernetes.io/service-name': 'refusing' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['127.0.0.1'] }],
        ports: [{ name: '', protocol: 'TCP', port: closed }],
      },
    });
    assert.equal(slice.status, 201, slice.body.toString());
    const base = await conversionCRD('refusals', 'Refusal', { namespace: NS, name: 'refusing', path: '/c' });
    const c = await api('POST', base.replace('%s', 'v1'), {
      body: {
        apiVersion: 'stable.example.com/v1',
        kind: 'Refusal',
        metadata: { name: 'r' },
        spec: { size: 1 },
      },
    });
    assert.equal(c.status, 201, c.body.toString());
    const failed = await until(async () => {
      const g = await api('GET', `${base.replace('%s', 'v2')}/r`);
      return /ECONNREFUSED/.test(g.json?.message ?? '') && g.json;
    }, 'the conversion to be refused');
    assert.equal(failed.code, 500);
    assert.ok(
      failed.message.startsWith(
        'Internal error occurred: conversion webhook for stable.example.com/v1, Kind=Refusal failed: ' +
          `Post "https://refusing.${NS}.svc:443/c": `,
      ),
      failed.message,
    );
  });

  it('proxies an APIService to its pod, and finds it Available there', async () => {
    const r = await api('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      body: {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1alpha1.things.example.com' },
        spec: {
          group: 'things.example.com',
          version: 'v1alpha1',
          groupPriorityMinimum: 2000,
          versionPriority: 200,
          service,
          caBundle,
        },
      },
    });
    assert.equal(r.status, 201, r.body.toString());
    const available = await until(
      async () => {
        const a = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.things.example.com');
        const cond = a.json?.status?.conditions?.find((x: any) => x.type === 'Available');
        return cond?.status === 'True' && cond;
      },
      'the APIService to be Available',
      20_000,
    );
    assert.equal(available.reason, 'Passed');
    // Proxied with the caBundle verified against <svc>.<ns>.svc.
    const d = await api('GET', `/apis/${GV}`);
    assert.equal(d.status, 200, d.body.toString());
    assert.equal(d.json.groupVersion, GV);
    assert.ok(callsTo(`/apis/${GV}`).some((x) => x.servername === SERVER_NAME));
  });
});
