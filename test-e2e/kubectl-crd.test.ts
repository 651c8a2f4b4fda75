// The installed kubectl against a real apiserver process: a CustomResourceDefinition
// applied, its objects listed with printer columns, explained, server-side
// applied (a map-list merged across managers), scaled, kept over a restart,
// and removed with the CRD.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import {
  startAPIServerProcess,
  startProcess,
  tempDir,
  waitForHTTP,
  type APIServerProc,
  type Proc,
} from './support/processes';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            description: The desired schedule.
            properties:
              cronSpec:
                type: string
                description: The schedule in cron format.
              image: {type: string}
              replicas: {type: integer, default: 1}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
`;

const CRONTAB = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "*/5 * * * *"
  image: my-image
  ports:
  - name: http
    port: 80
`;

const MORE_PORTS = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  ports:
  - name: https
    port: 443
`;

describe('kubectl with CustomResourceDefinitions', function () {
  this.timeout(180_000);
  let srv: APIServerProc;
  let restarted: Proc | undefined;
  let cacheDir: string;
  const k = (...args: string[]) => kubectl(srv.kubeconfig, ['--cache-dir', cacheDir, ...args]);
  const ok = async (args: string[], input?: string) => {
    const r = await kubectl(srv.kubeconfig, ['--cache-dir', cacheDir, ...args], { input });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };

  before(async function () {
    if (!kubectlAvailable()) {
      console.warn('kubectl not found on PATH: skipping the kubectl CRD tests');
      this.skip();
    }
    cacheDir = tempDir('kubectl-cache');
    srv = await startAPIServerProcess();
  });
  after(async () => {
    await restarted?.stop();
    await srv?.cleanup();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('applies a CRD that becomes Established and served', async () => {
    assert.equal(
      (await ok(['apply', '-f', '-'], CRD)).trim(),
      'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created',
    );
    await ok(['wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=10s']);
    await waitUntil(async () => (await k('get', 'crontabs')).code === 0, 10_000, 'crontabs served');
    assert.match(
      await ok(['api-resources', '--api-group=stable.example.com']),
      /^crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab$/m,
    );
  });

  it('server-side applies a custom object and lists it with the printer columns', async () => {
    assert.equal(
      (await ok(['apply', '--server-side', '-f', '-'], CRONTAB)).trim(),
      'crontab.stable.example.com/my-cron serverside-applied',
    );
    const table = await ok(['get', 'crontabs']);
    assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/);
    assert.match(table, /^my-cron\s+\*\/5 \* \* \* \*\s+1\s+\d+s\n/m);
    assert.match(
      await ok(['get', 'ct', 'my-cron', '-o', 'name']),
      /^crontab\.stable\.example\.com\/my-cron$/m,
    );
  });

  it('explains the kind from the published schema', async () => {
    const out = await ok(['explain', 'crontab']);
    assert.match(out, /KIND:\s+CronTab/);
    assert.match(out, /VERSION:\s+v1/);
    assert.match(out, /A CronTab runs an image on a schedule\./);
    assert.match(out, /spec\s+<Object>/);
    const ports = await ok(['explain', 'crontab.spec.ports']);
    assert.match(ports, /name\s+<string> -required-/);
  });

  it('merges a map-list applied by two field managers', async () => {
    await ok(['apply', '--server-side', '--field-manager=other', '-f', '-'], MORE_PORTS);
    const ports = JSON.parse(await ok(['get', 'ct', 'my-cron', '-o', 'jsonpath={.spec.ports}']));
    assert.deepEqual(ports, [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ]);
    const conflict = await kubectl(
      srv.kubeconfig,
      ['--cache-dir', cacheDir, 'apply', '--server-side', '--field-manager=third', '-f', '-'],
      { input: CRONTAB.replace('port: 80', 'port: 8080') },
    );
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "kubectl": \.spec\.ports\[name="http"\]\.port/);
  });

  it('scales through the scale subresource', async () => {
    assert.equal(
      (await ok(['scale', 'crontab', 'my-cron', '--replicas=3'])).trim(),
      'crontab.stable.example.com/my-cron scaled',
    );
    assert.equal(
      await ok(['get', 'ct', 'my-cron', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}']),
      '3 3',
    );
    assert.match(await ok(['get', 'crontabs']), /^my-cron\s+\S+ \S+ \S+ \S+ \S+\s+3\s+/m);
  });

  it('keeps serving the CRD after the apiserver restarts', async () => {
    await srv.stop();
    restarted = startProcess(
      'apiserver',
      [
        '--secure-port',
        String(srv.port),
        '--bind-address',
        '127.0.0.1',
        '--data-dir',
        join(srv.dir, 'data'),
        '--cert-dir',
        join(srv.dir, 'certs'),
        '--write-kubeconfig',
        srv.kubeconfig,
      ],
      srv.dir,
    );
    await waitForHTTP(srv.kubeconfig, '/readyz/poststarthook/crd-informer-synced', 30_000, restarted.exited);
    assert.match(await ok(['get', 'crontabs']), /^my-cron\s+/m);
    assert.match(await ok(['explain', 'crontab.spec.cronSpec']), /The schedule in cron format\./);
  });

  it('deleting the CRD removes its objects', async () => {
    assert.equal(
      (await ok(['delete', 'crd', 'crontabs.stable.example.com'])).trim(),
      'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted',
    );
    assert.equal((await ok(['get', 'crd', '-o', 'name'])).trim(), '');
    const raw = await k('get', '--raw', '/apis/stable.example.com/v1/namespaces/default/crontabs');
    assert.notEqual(raw.code, 0);
    assert.match(raw.stderr, /NotFound|not found/);
    // Recreated, the CRD starts empty: its objects went with it.
    await ok(['apply', '-f', '-'], CRD);
    await ok(['wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=10s']);
    await waitUntil(
      async () => {
        const r = await k('get', 'crontabs', '-o', 'name');
        return r.code === 0 && r.stdout.trim() === '' ? true : undefined;
      },
      10_000,
      'an empty crontabs list',
    );
  });
});
