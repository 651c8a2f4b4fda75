// The installed kubectl against a real apiserver process, TLS verification on:
// every command issue 3 and issue 5 name, as a user would type them.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAPIServerProcess, type APIServerProc } from './support/processes';
import { kubectl, kubectlAvailable, kubectlOk, kubectlStream } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    ports: [{containerPort: 80}]
`;

const DEPLOYMENT = (replicas: number, image = 'nginx:1.25') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: app}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: main
        image: ${image}
        ports: [{containerPort: 8080}]
`;

describe('kubectl against the apiserver', function () {
  this.timeout(120_000);
  let srv: APIServerProc;
  const k = (...args: string[]) => kubectl(srv.kubeconfig, args);
  const ok = (...args: string[]) => kubectlOk(srv.kubeconfig, args);

  before(async function () {
    if (!kubectlAvailable()) {
      console.warn('kubectl not found on PATH: skipping the kubectl compatibility tests');
      this.skip();
    }
    srv = await startAPIServerProcess();
    // What the controller manager's serviceaccount controller does in a full cluster.
    await ok('create', 'serviceaccount', 'default');
  });
  after(async () => {
    await srv?.cleanup();
  });

  it('creates from a file and gets in every output format', async () => {
    const created = await kubectl(srv.kubeconfig, ['create', '--validate=strict', '-f', '-'], { input: POD });
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'pod/web created');
    const table = await ok('get', 'pods');
    assert.match(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    assert.match(table, /^web\s+0\/1\s+Pending\s+0\s+\S+\n/m);
    assert.match(
      await ok('get', 'pods', '-o', 'wide'),
      /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/,
    );
    const yaml = await ok('get', 'pod', 'web', '-o', 'yaml');
    assert.match(yaml, /^kind: Pod$/m);
    assert.match(yaml, /^ {2}uid: [0-9a-f-]{36}$/m);
    const json = JSON.parse(await ok('get', 'pod', 'web', '-o', 'json'));
    assert.equal(json.spec.containers[0].image, 'nginx:1.25');
    assert.equal((await ok('get', 'pod', 'web', '-o', 'name')).trim(), 'pod/web');
    assert.equal(await ok('get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels.app}'), 'web');
    assert.match(
      await ok('get', 'pod', 'web', '-o', 'custom-columns=N:.metadata.name,I:.spec.containers[0].image'),
      /web\s+nginx:1.25/,
    );
    assert.match(await ok('describe', 'pod', 'web'), /^Name:\s+web$/m);
  });

  it('lists in chunks and watches', async () => {
    for (let i = 0; i < 7; i++) await ok('create', 'configmap', `chunk-${i}`, `--from-literal=i=${i}`);
    const out = await ok('get', 'configmaps', '--chunk-size=2', '-o', 'name');
    for (let i = 0; i < 7; i++) assert.match(out, new RegExp(`configmap/chunk-${i}\\b`));
    const w = kubectlStream(srv.kubeconfig, [
      'get',
      'configmaps',
      '-w',
      '--output-watch-events',
      '-l',
      'watched=yes',
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    await ok('create', 'configmap', 'watched');
    await ok('label', 'configmap', 'watched', 'watched=yes');
    await ok('annotate', 'configmap', 'watched', 'note=hello');
    await ok('delete', 'configmap', 'watched');
    await waitUntil(async () => /DELETED\s+watched/.test(w.output()), 10_000, 'DELETED event');
    await w.stop();
    const lines = w
      .output()
      .split('\n')
      .filter((l) => /watched/.test(l));
    assert.deepEqual(
      lines.map((l) => l.split(/\s+/)[0]),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
  });

  it('labels, annotates and patches with every patch type', async () => {
    await ok('label', 'pod', 'web', 'tier=front');
    await ok('annotate', 'pod', 'web', 'owner=team-a');
    assert.match(await ok('get', 'pods', '-l', 'tier=front', '-o', 'name'), /pod\/web/);
    await ok('patch', 'pod', 'web', '--type', 'merge', '-p', '{"metadata":{"labels":{"merge":"yes"}}}');
    await ok(
      'patch',
      'pod',
      'web',
      '--type',
      'json',
      '-p',
      '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]',
    );
    await ok('patch', 'pod', 'web', '-p', '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}');
    const pod = JSON.parse(await ok('get', 'pod', 'web', '-o', 'json'));
    assert.equal(pod.metadata.labels.merge, 'yes');
    assert.equal(pod.metadata.labels.json, 'yes');
    assert.equal(pod.metadata.annotations.owner, 'team-a');
    assert.equal(pod.spec.containers.length, 1);
    assert.equal(pod.spec.containers[0].image, 'nginx:1.26');
    assert.equal(
      pod.spec.containers[0].ports[0].containerPort,
      80,
      'strategic merge kept the other fields of the container',
    );
  });

  it('answers dry-run on the server without storing', async () => {
    const r = await kubectl(srv.kubeconfig, ['create', '-f', '-', '--dry-run=server', '-o', 'name'], {
      input: POD.replace('name: web', 'name: dry'),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'pod/dry');
    assert.notEqual((await k('get', 'pod', 'dry')).code, 0);
  });

  it('deletes with finalizers and waits for the deletion', async () => {
    await ok('create', 'configmap', 'held');
    await ok(
      'patch',
      'configmap',
      'held',
      '--type',
      'merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    );
    await ok('delete', 'configmap', 'held', '--wait=false');
    assert.match(await ok('get', 'configmap', 'held', '-o', 'jsonpath={.metadata.deletionTimestamp}'), /Z$/);
    const wait = kubectl(srv.kubeconfig, ['wait', '--for=delete', 'configmap/held', '--timeout=30s']);
    await new Promise((r) => setTimeout(r, 1000));
    await ok(
      'patch',
      'configmap',
      'held',
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    );
    const w = await wait;
    assert.equal(w.code, 0, w.stderr);
    assert.notEqual((await k('get', 'configmap', 'held')).code, 0);
    await ok('create', 'configmap', 'plain');
    assert.match(await ok('delete', 'configmap', 'plain', '--wait'), /deleted/);
  });

  it('lists API resources and versions, and reads health', async () => {
    const res = await ok('api-resources');
    assert.match(res, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(res, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    const versions = await ok('api-versions');
    assert.match(versions, /^apps\/v1$/m);
    assert.match(versions, /^v1$/m);
    const ready = await ok('get', '--raw', '/readyz?verbose');
    assert.match(ready, /readyz check passed/);
  });

  it('applies client-side (last-applied + strategic merge) and server-side with conflicts', async () => {
    const a1 = await kubectl(srv.kubeconfig, ['apply', '-f', '-'], { input: DEPLOYMENT(2) });
    assert.equal(a1.code, 0, a1.stderr);
    assert.match(a1.stdout, /deployment.apps\/app created/);
    const a2 = await kubectl(srv.kubeconfig, ['apply', '-f', '-'], { input: DEPLOYMENT(3) });
    assert.match(a2.stdout, /configured/);
    const dep = JSON.parse(await ok('get', 'deploy', 'app', '-o', 'json'));
    assert.equal(dep.spec.replicas, 3);
    assert.ok(dep.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    const ss = await kubectl(srv.kubeconfig, ['apply', '--server-side', '-f', '-'], { input: DEPLOYMENT(3) });
    assert.equal(ss.code, 0, ss.stderr);
    await ok('scale', 'deploy', 'app', '--replicas=5');
    const conflict = await kubectl(srv.kubeconfig, ['apply', '--server-side', '-f', '-'], {
      input: DEPLOYMENT(3),
    });
    assert.notEqual(conflict.code, 0);
    assert.match(
      conflict.stderr,
      /Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas/,
    );
    const forced = await kubectl(srv.kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: DEPLOYMENT(3),
    });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await ok('get', 'deploy', 'app', '-o', 'jsonpath={.spec.replicas}'), '3');
    const mf = JSON.parse(await ok('get', 'deploy', 'app', '-o', 'json', '--show-managed-fields')).metadata
      .managedFields;
    assert.ok(
      mf.some(
        (e: any) => e.manager === 'kubectl' && e.operation === 'Apply' && e.fieldsV1['f:spec']['f:replicas'],
      ),
    );
  });

  it('edits with EDITOR set to a script', async () => {
    const script = join(srv.dir, 'editor.sh');
    writeFileSync(script, '#!/bin/sh\nsed -i "s/replicas: 3/replicas: 4/" "$1"\n');
    chmodSync(script, 0o755);
    const r = await kubectl(srv.kubeconfig, ['edit', 'deployment', 'app'], {
      env: { EDITOR: script, KUBE_EDITOR: script },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /edited/);
    assert.equal(await ok('get', 'deploy', 'app', '-o', 'jsonpath={.spec.replicas}'), '4');
  });

  it('explains kinds from OpenAPI', async () => {
    const e = await ok('explain', 'pods.spec.containers');
    assert.match(e, /KIND:\s+Pod/);
    assert.match(e, /FIELD:\s+containers <\[\]Container>/);
    assert.match(e, /image\s+<string>/);
    assert.match(await ok('explain', 'deployment.spec.replicas'), /replicas\s+<integer>/);
  });
});
