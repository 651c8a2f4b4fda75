// tkube as controller-runtime envtest's assets (tkube envtest-assets): envtest v0.24.1
// emulated step by step (support/envtest.ts) starts etcd and the kube-apiserver asset,
// then what envtest users do and miss: a CRD waited for in discovery, an envtest-style
// webhook (caBundle = the serving leaf, URL "https://127.0.0.1:P//path") for admission and
// CRD conversion, namespace deletion and garbage collection (no controller manager is
// started by envtest), and Stop by SIGTERM to each process group leaving nothing behind.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { Client, type KubeObject } from '../shared/client';
import { createCA, createServingCert } from '../shared/pki/certs';
import { writeEnvtestAssets } from '../shared/cluster/envtest-assets';
import { findOnPath } from '../shared/cluster/process';
import { groupAlive, startEnvtest, type Envtest } from './support/envtest';
import { freePort, tempDir } from './support/processes';

const GROUP = 'envtest.tkube.io';

async function eventually<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const gone = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: { code?: number }) => (err?.code === 404 ? true : undefined),
  );

/**
 * The user's webhook server as controller-runtime runs it: a Go ServeMux, which answers a
 * path with "//" by 301 to the clean path, so only a client that cleans the path reaches it.
 */
async function startWebhookServer(certPem: string, keyPem: string, port: number) {
  const calls: string[] = [];
  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      calls.push(path);
      if (path.includes('//')) {
        res.writeHead(301, { location: path.replace(/\/+/g, '/') }).end();
        return;
      }
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      let answer: object;
      if (path === '/validate-configmaps') {
        answer = {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: review.request.uid,
            allowed: false,
            status: { code: 403, message: 'denied by the envtest webhook' },
          },
        };
      } else if (path === '/convert') {
        const desired = review.request.desiredAPIVersion;
        answer = {
          apiVersion: review.apiVersion,
          kind: 'ConversionReview',
          response: {
            uid: review.request.uid,
            result: { status: 'Success' },
            convertedObjects: review.request.objects.map((o: KubeObject) => ({
              ...o,
              apiVersion: desired,
              metadata: { ...o.metadata, labels: { ...o.metadata?.labels, converted: 'yes' } },
            })),
          },
        };
      } else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return { calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('envtest on tkube (tkube envtest-assets)', function () {
  this.timeout(180_000);
  const haveKubectl = !!findOnPath('kubectl');
  let dir: string;
  let env: Envtest | undefined;
  let webhook: Awaited<ReturnType<typeof startWebhookServer>> | undefined;

  before(async function () {
    if (!haveKubectl) this.skip();
    dir = tempDir('envtest');
    const { dir: assets } = writeEnvtestAssets(join(dir, 'assets'));
    env = await startEnvtest(assets, join(dir, 'logs'));
  });

  after(async () => {
    await webhook?.close();
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts as envtest does: the admin user reads the default namespace and kubernetes is 10.0.0.1', async () => {
    const svc = await env!.client.resource('services').namespace('default').get('kubernetes');
    assert.equal((svc as any).spec.clusterIP, '10.0.0.1');
  });

  it('serves envtest webhooks: a leaf as caBundle and a "//" path, for admission and conversion', async () => {
    const client = env!.client;
    // envtest's webhook set-up: a tiny CA of its own, a leaf for localhost/127.0.0.1, caBundle = the leaf.
    const ca = await createCA('envtest-environment');
    const leaf = await createServingCert(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    const port = await freePort();
    webhook = await startWebhookServer(leaf.certPem, leaf.keyPem, port);
    const caBundle = Buffer.from(leaf.certPem).toString('base64');
    const base = `https://127.0.0.1:${port}/`;

    await client.resource('customresourcedefinitions.apiextensions.k8s.io').create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: ['v1', 'v2'].map((name) => ({
          name,
          served: true,
          storage: name === 'v1',
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        })),
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1', 'v1beta1'],
            clientConfig: { url: `${base}/convert`, caBundle },
          },
        },
      },
    } as KubeObject);
    // envtest's CRD wait: a new client per poll, every 100 ms, until the plural is listed.
    for (const version of ['v1', 'v2'])
      await eventually(`widgets in /apis/${GROUP}/${version}`, async () => {
        const fresh = Client.create(env!.config, { http2: false });
        try {
          const list = await fresh.rest.request({ method: 'GET', path: `/apis/${GROUP}/${version}` });
          return list.resources?.some((r: { name: string }) => r.name === 'widgets') || undefined;
        } finally {
          await fresh.close();
        }
      });

    await client.resource('validatingwebhookconfigurations.admissionregistration.k8s.io').create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'envtest-validating' },
      webhooks: [
        {
          name: 'vconfigmap.envtest.tkube.io',
          clientConfig: { url: `${base}/validate-configmaps`, caBundle },
          rules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
          ],
          objectSelector: { matchLabels: { 'envtest-webhook': 'deny' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
        },
      ],
    } as KubeObject);

    const cms = client.resource('configmaps').namespace('default');
    const denied = await eventually('the webhook to be called', async () => {
      try {
        await cms.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'denied', labels: { 'envtest-webhook': 'deny' } },
        } as KubeObject);
        await cms.delete('denied');
        return undefined; // the configuration was not in effect yet
      } catch (err) {
        return err as { code?: number; message: string };
      }
    });
    assert.equal(denied.code, 403, denied.message);
    assert.match(denied.message, /denied by the envtest webhook/);
    assert.ok(webhook.calls.includes('/validate-configmaps'), `calls: ${webhook.calls.join(' ')}`);

    const widgets = (v: string) =>
      client
        .resource({ group: GROUP, version: v, resource: 'widgets', namespaced: true })
        .namespace('default');
    await widgets('v1').create({
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
    } as KubeObject);
    const asV2 = await widgets('v2').get('w1');
    assert.equal(asV2.apiVersion, `${GROUP}/v2`);
    assert.equal(asV2.metadata?.labels?.converted, 'yes');
    assert.ok(webhook.calls.includes('/convert'), `calls: ${webhook.calls.join(' ')}`);
    assert.ok(!webhook.calls.some((p) => p.includes('//')), `calls: ${webhook.calls.join(' ')}`);
  });

  it('deletes a namespace with its contents (no Terminating forever)', async () => {
    const client = env!.client;
    await client.resource('namespaces').create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'doomed' },
    } as KubeObject);
    await client
      .resource('configmaps')
      .namespace('doomed')
      .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inside' } } as KubeObject);
    await client.resource('namespaces').delete('doomed');
    await eventually('namespace doomed to be gone', () => gone(client.resource('namespaces').get('doomed')));
  });

  it('collects an owned object with its owner (garbage collector)', async () => {
    const cms = env!.client.resource('configmaps').namespace('default');
    const owner = await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner' },
    } as KubeObject);
    await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'owned',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
      },
    } as KubeObject);
    await cms.delete('owner');
    await eventually('the owned ConfigMap to be collected', () => gone(cms.get('owned')));
  });

  it('stops by SIGTERM to each process group, leaving no process behind', async () => {
    const processes = env!.processes;
    assert.ok(processes.every((p) => groupAlive(p.pgid)));
    await webhook?.close();
    webhook = undefined;
    await env!.stop();
    env = undefined;
    for (const p of processes) {
      assert.equal(groupAlive(p.pgid), false, `process group of ${p.name} still has processes`);
      const { code, signal } = await p.exited;
      assert.notEqual(signal, 'SIGKILL', `${p.name} had to be killed`);
      if (p.name === 'kube-apiserver') assert.equal(code, 0, 'the apiserver exits 0 on SIGTERM');
    }
  });
});
