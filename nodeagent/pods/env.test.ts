// A container's environment resolved against a real apiserver (in-process):
// ConfigMaps, Secrets and Services read with a client, as the agent does.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../../shared/client';
import {
  ContainerConfigError,
  expand,
  expandCommandAndArgs,
  isEnvVarName,
  resolveEnv,
  serviceEnv,
} from './env';
import { PodObjects } from './pod-objects';

describe('nodeagent/pods: env', () => {
  let srv: TestAPIServer;
  let client: Client;
  let objects: PodObjects;
  const warnings: string[] = [];

  const inputs = () => ({
    objects,
    podIPs: ['10.244.0.5'],
    hostIPs: ['192.168.0.10'],
    allocatable: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' },
    warn: (reason: string, message: string) => warnings.push(`${reason} ${message}`),
  });
  const pod = (spec: any, ns = 'env-test') => ({
    metadata: {
      name: 'p',
      namespace: ns,
      uid: 'u-1',
      labels: { app: 'web' },
      annotations: { 'a.b/c': 'x"y' },
    },
    spec: { nodeName: 'n1', serviceAccountName: 'sa1', ...spec },
  });
  const asMap = (env: { name: string; value: string }[]) =>
    Object.fromEntries(env.map((e) => [e.name, e.value]));

  before(async function () {
    this.timeout(60_000);
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
    objects = new PodObjects(client);
    await client.resource('namespaces').create({ metadata: { name: 'env-test' } });
    await client
      .resource('configmaps')
      .namespace('env-test')
      .create({ metadata: { name: 'cfg' }, data: { color: 'blue', size: 'L', '1bad': 'x', '2bad': 'y' } });
    await client
      .resource('secrets')
      .namespace('env-test')
      .create({
        metadata: { name: 'sec' },
        data: { password: Buffer.from('s3cret').toString('base64') },
      });
    await client
      .resource('services')
      .namespace('env-test')
      .create({
        metadata: { name: 'my-db' },
        spec: { ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }] },
      });
  });
  after(async () => {
    await objects?.close();
    await client?.close();
    await srv?.stop();
  });
  beforeEach(() => (warnings.length = 0));

  it('expands $(VAR) like the kubelet', () => {
    const m = (n: string) => ({ A: 'a', B: 'b' })[n];
    assert.equal(expand('$(A)-$(B)', m), 'a-b');
    assert.equal(expand('$$(A)', m), '$(A)');
    assert.equal(expand('$(C)', m), '$(C)');
    assert.equal(expand('$(A', m), '$(A');
    assert.equal(expand('x$', m), 'x$');
    assert.equal(expand('$x', m), '$x');
    assert.equal(expand('$()', m), '$()');
    assert.ok(isEnvVarName('a.b-c_D'));
    assert.ok(!isEnvVarName('1bad'));
    assert.ok(!isEnvVarName('bad key'));
    assert.ok(!isEnvVarName(''));
  });

  it('expands command and args from the resolved env', () => {
    const c = { name: 'c', command: ['sh', '-c', 'echo $(A) $$(A) $(B)'], args: ['$(A)'] };
    assert.deepEqual(expandCommandAndArgs(c, [{ name: 'A', value: 'x' }]), {
      name: 'c',
      command: ['sh', '-c', 'echo x $(A) $(B)'],
      args: ['x'],
    });
    const plain = { name: 'c' };
    assert.equal(expandCommandAndArgs(plain, []), plain);
  });

  it('writes the service variables and Docker links of a service', () => {
    const env = serviceEnv([
      {
        metadata: { name: 'my-svc', namespace: 'x' },
        spec: {
          clusterIP: '10.0.0.7',
          ports: [
            { name: 'http', port: 80, protocol: 'TCP' },
            { port: 53, protocol: 'UDP' },
          ],
        },
      },
      { metadata: { name: 'headless', namespace: 'x' }, spec: { clusterIP: 'None', ports: [{ port: 1 }] } },
    ]);
    assert.deepEqual(Object.fromEntries(env.map((e) => [e.name, e.value])), {
      MY_SVC_SERVICE_HOST: '10.0.0.7',
      MY_SVC_SERVICE_PORT: '80',
      MY_SVC_SERVICE_PORT_HTTP: '80',
      MY_SVC_PORT: 'tcp://10.0.0.7:80',
      MY_SVC_PORT_80_TCP: 'tcp://10.0.0.7:80',
      MY_SVC_PORT_80_TCP_PROTO: 'tcp',
      MY_SVC_PORT_80_TCP_PORT: '80',
      MY_SVC_PORT_80_TCP_ADDR: '10.0.0.7',
      MY_SVC_PORT_53_UDP: 'udp://10.0.0.7:53',
      MY_SVC_PORT_53_UDP_PROTO: 'udp',
      MY_SVC_PORT_53_UDP_PORT: '53',
      MY_SVC_PORT_53_UDP_ADDR: '10.0.0.7',
    });
  });

  it('resolves envFrom, values, key refs, fields and resources; service links last', async () => {
    const env = await resolveEnv(
      pod({}),
      {
        name: 'c',
        resources: { limits: { memory: '256Mi' }, requests: { cpu: '250m' } },
        envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'CFG_' }, { configMapRef: { name: 'cfg' } }],
        env: [
          {
            name: 'GREETING',
            value: 'hello $(color) from $(MY_DB_SERVICE_HOST):$(MY_DB_SERVICE_PORT) $$(color)',
          },
          { name: 'PASS', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
          { name: 'SIZE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'size' } } },
          { name: 'MISSING_OK', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'ANN', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['a.b/c']" } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'HOST_IPS', valueFrom: { fieldRef: { fieldPath: 'status.hostIPs' } } },
          { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
          { name: 'CPU_REQ_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
          { name: 'CPU_REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
          // Go clients send an unset divisor as the zero Quantity "0": it counts as 1.
          { name: 'MEM_DIV0', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '0' } } },
          { name: 'CPU_DIV0', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '0' } } },
        ],
      },
      inputs(),
    );
    const m = asMap(env);
    assert.equal(m.CFG_color, 'blue');
    assert.equal(m.CFG_1bad, 'x', 'valid with the prefix');
    assert.equal(m.color, 'blue');
    assert.equal(m.GREETING, `hello blue from ${m.MY_DB_SERVICE_HOST}:5432 $(color)`);
    assert.match(m.MY_DB_SERVICE_HOST, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(m.MY_DB_SERVICE_PORT_SQL, '5432');
    assert.equal(m.PASS, 's3cret');
    assert.equal(m.SIZE, 'L');
    assert.ok(!('MISSING_OK' in m));
    assert.equal(m.NAME, 'p');
    assert.equal(m.NS, 'env-test');
    assert.equal(m.UID, 'u-1');
    assert.equal(m.APP, 'web');
    assert.equal(m.ANN, 'x"y');
    assert.equal(m.NODE, 'n1');
    assert.equal(m.SA, 'sa1');
    assert.equal(m.POD_IP, '10.244.0.5');
    assert.equal(m.HOST_IPS, '192.168.0.10');
    assert.equal(m.MEM_MI, '256');
    assert.equal(m.CPU_LIMIT, '4', 'no cpu limit: the node allocatable');
    assert.equal(m.CPU_REQ_M, '250');
    assert.equal(m.CPU_REQ, '1', 'rounded up to whole cores');
    assert.equal(m.MEM_DIV0, String(256 * 1024 * 1024));
    assert.equal(m.CPU_DIV0, '1');
    // The kubernetes service of the default namespace is always there.
    assert.match(m.KUBERNETES_SERVICE_HOST, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(m.KUBERNETES_SERVICE_PORT, '443');
    assert.deepEqual(
      [...new Set(warnings)],
      [
        'InvalidEnvironmentVariableNames Keys [1bad, 2bad] from the EnvFrom configMap env-test/cfg were skipped since they are considered invalid environment variable names.',
      ],
    );
  });

  it('leaves out the namespace services without enableServiceLinks, not the kubernetes one', async () => {
    const m = asMap(await resolveEnv(pod({ enableServiceLinks: false }), { name: 'c' }, inputs()));
    assert.ok(!('MY_DB_SERVICE_HOST' in m));
    assert.ok(m.KUBERNETES_SERVICE_HOST);
    assert.ok(m.KUBERNETES_PORT_443_TCP);
  });

  it("fails with the kubelet's messages when an object or key is missing", async () => {
    const fails = async (env: any[], envFrom: any[] = []) => {
      try {
        await resolveEnv(pod({}), { name: 'c', env, envFrom }, inputs());
      } catch (err) {
        assert.ok(err instanceof ContainerConfigError);
        return (err as Error).message;
      }
      assert.fail('resolved');
    };
    assert.equal(
      await fails([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }]),
      'configmap "nope" not found',
    );
    assert.equal(
      await fails([{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }]),
      'secret "nope" not found',
    );
    assert.equal(
      await fails([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }]),
      "couldn't find key k in ConfigMap env-test/cfg",
    );
    assert.equal(
      await fails([{ name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }]),
      "couldn't find key k in Secret env-test/sec",
    );
    assert.equal(await fails([], [{ secretRef: { name: 'gone' } }]), 'secret "gone" not found');
    // Optional ones are skipped.
    const m = asMap(
      await resolveEnv(
        pod({}),
        {
          name: 'c',
          envFrom: [{ secretRef: { name: 'gone', optional: true } }],
          env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'k', optional: true } } }],
        },
        inputs(),
      ),
    );
    assert.ok(!('X' in m));
  });
});
