// Services on a two-node containerd cluster as `tkube up` runs it (a service
// proxy per node, each in a table of its own, on this one kernel): a ClusterIP
// from a pod on each node balanced over backends on both nodes, NodePorts from
// a pod and from the host, ClientIP affinity, internalTrafficPolicy Local decided
// per node, a Service without endpoints that refuses at once, a scale-down followed, pod to pod across nodes, kubectl in a
// pod with its own service account, EndpointSlices that stay put, and nothing
// of it left in the kernel after down().
// Network: the cluster's Service CIDR is a block of 198.18.0.0/15 of this process
// (service-route.test-support.ts) routed unreachable before anything starts, then
// through the first node's bridge once its proxies programmed it; every ClusterIP
// dialled is checked to be routed there first. Pod CIDRs are the tests' own.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { request } from 'undici';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { nodeProxyRules, serviceProxyUnavailable } from '../shared/cluster/cluster-proxy';
import { findOnPath, waitUntil } from '../shared/cluster/process';
import { hasUnreachableRoute, removeUnreachableRoutes } from '../shared/cluster/service-route';
import { testServiceCIDR } from '../shared/cluster/service-route.test-support';
import { sleeperPod, startCluster } from './support/cluster';
import { kubectl, kubectlAvailable, kubectlOn } from './support/kubectl';

const SYSCTLS = ['/proc/sys/net/ipv4/ip_forward', '/proc/sys/net/bridge/bridge-nf-call-iptables'];
const sysctls = () => SYSCTLS.map((p) => (existsSync(p) ? readFileSync(p, 'utf8').trim() : '-'));

describe('services on a two-node containerd cluster with its service proxies', function () {
  this.timeout(300_000);
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  const { cidr: serviceCIDR } = testServiceCIDR(24, 3);
  const podCIDRs = [testPodCIDR()];
  while (podCIDRs.length < 2) {
    const c = testPodCIDR();
    if (!podCIDRs.includes(c)) podCIDRs.push(c);
  }
  const rules = { table: `tkube-e2e-${process.pid}`, chainPrefix: 'TKE' };
  let sysctlsBefore: string[] = [];
  let bridges: string[] = [];
  let nodeIPs: string[] = [];
  const ips: Record<string, string> = {};

  const { ok, json, apply } = kubectlOn(() => cluster!.kubeconfig);
  /** A shell command in a pod; stdout. */
  const inPod = (pod: string, script: string) => ok(['exec', pod, '--', 'sh', '-c', script]);
  /** n sequential HTTP GETs from a pod, one answer (or wget's error) per line. */
  const gets = async (pod: string, url: string, n: number) =>
    (await inPod(pod, `for i in $(seq ${n}); do wget -q -T 5 -O - ${url} 2>&1 || echo failed; echo; done`))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  /** Before a ClusterIP is dialled: it is routed through the cluster's own bridge, never off the host. */
  const assertRoutedHere = (ip: string) => {
    const route = execFileSync('ip', ['route', 'get', ip], { encoding: 'utf8' });
    assert.match(route, new RegExp(`dev ${bridges[0]} `), route);
  };
  const clusterIP = async (svc: string) => {
    const ip = (await json('get', 'service', svc)).spec.clusterIP as string;
    assertRoutedHere(ip);
    return ip;
  };

  const node = (i: number) => `tkube-node-${i + 1}`;
  /** A busybox httpd answering its pod name on 8080. */
  const web = (i: number, replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `web-${i + 1}` },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web', node: String(i + 1) } },
      template: {
        metadata: { labels: { app: 'web', node: String(i + 1) } },
        spec: {
          nodeName: node(i),
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'web',
              image: 'busybox',
              imagePullPolicy: 'IfNotPresent',
              command: [
                'sh',
                '-c',
                'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www',
              ],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  });
  const client = (name: string, i: number, extra: any = {}) =>
    sleeperPod(name, { container: extra.container, spec: { nodeName: node(i), ...extra.spec } });
  const service = (name: string, spec: any) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
  });

  before(async function () {
    const why =
      runtimeTestsUnavailable() ??
      serviceProxyUnavailable() ??
      (findOnPath('nft') ? undefined : 'nft is not installed') ??
      (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the service proxy e2e tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    sysctlsBefore = sysctls();
    cluster = await startCluster({
      runtime: 'containerd',
      nodes: 2,
      podCIDR: (i) => podCIDRs[i],
      serviceCIDR,
      unreachableServiceRoute: true,
      serviceProxy: true,
      proxyRules: rules,
      metricsServer: false,
      timeoutMs: 120_000,
    });
    bridges = cluster.containerds.map((c) => c.bridge);
    nodeIPs = [0, 1].map((i) => cluster!.nodeAddress(i));

    const viewer = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'viewer' },
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'viewer-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: 'default' }],
    };
    const kubectlPod = client('kubectl', 1, {
      spec: {
        serviceAccountName: 'viewer',
        volumes: [
          { name: 'kubectl', hostPath: { path: realpathSync(findOnPath('kubectl')!), type: 'File' } },
        ],
      },
      container: { volumeMounts: [{ name: 'kubectl', mountPath: '/kubectl', readOnly: true }] },
    });
    await apply(
      web(0, 2),
      web(1, 2),
      service('web', { selector: { app: 'web' }, type: 'NodePort' }),
      service('sticky', { selector: { app: 'web' }, sessionAffinity: 'ClientIP' }),
      service('empty', { selector: { app: 'nothing' } }),
      service('local', { selector: { app: 'web' }, internalTrafficPolicy: 'Local' }),
      client('client-1', 0),
      client('client-2', 1),
      viewer,
      binding,
      kubectlPod,
    );
    await ok(['rollout', 'status', 'deployment/web-1', 'deployment/web-2', '--timeout=120s']);
    await waitUntil(
      async () => {
        const pods = (await json('get', 'pods')).items;
        const ready = pods.filter((p: any) =>
          (p.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'),
        );
        for (const p of pods) ips[p.metadata.name] = p.status.podIP;
        return ready.length === pods.length && pods.length === 7;
      },
      120_000,
      'every pod Ready',
    );
  });

  after(async () => {
    await cluster?.cleanup();
    removeUnreachableRoutes(serviceCIDR);
  });

  it("gives containerd nodes their bridge's gateway as InternalIP and the apiserver that address", async () => {
    const nodes = (await json('get', 'nodes')).items;
    for (const [i, n] of nodes.entries())
      assert.equal(n.status.addresses.find((a: any) => a.type === 'InternalIP').address, nodeIPs[i]);
    const eps = await json('get', 'endpoints', 'kubernetes');
    assert.equal(eps.subsets[0].addresses[0].ip, nodeIPs[0]);
    assert.equal(nodeIPs[0], `${podCIDRs[0].split('.').slice(0, 3).join('.')}.1`);
  });

  it('balances a ClusterIP over backends on both nodes, from a pod on each node', async () => {
    const ip = await clusterIP('web');
    for (const from of ['client-1', 'client-2']) {
      const answers = await gets(from, `http://${ip}/`, 24);
      assert.equal(answers.length, 24, answers.join('\n'));
      assert.ok(
        answers.some((a) => a.startsWith('web-1-')),
        `${from} reached node 1: ${answers}`,
      );
      assert.ok(
        answers.some((a) => a.startsWith('web-2-')),
        `${from} reached node 2: ${answers}`,
      );
      assert.ok(
        answers.every((a) => /^web-[12]-/.test(a)),
        answers.join('\n'),
      );
    }
  });

  it('reaches a ClusterIP from the host', async () => {
    const ip = await clusterIP('web');
    const r = await request(`http://${ip}/`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
    assert.match(await r.body.text(), /^web-[12]-/);
  });

  it('reaches a NodePort on either node from a pod and from the host', async () => {
    const nodePort = (await json('get', 'service', 'web')).spec.ports[0].nodePort;
    for (const ip of nodeIPs) {
      const fromPod = await gets('client-1', `http://${ip}:${nodePort}/`, 4);
      assert.ok(
        fromPod.every((a) => /^web-[12]-/.test(a)),
        fromPod.join('\n'),
      );
      const r = await request(`http://${ip}:${nodePort}/`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
      assert.match(await r.body.text(), /^web-[12]-/);
    }
  });

  it('keeps a client on one backend with sessionAffinity ClientIP', async () => {
    const ip = await clusterIP('sticky');
    for (const from of ['client-1', 'client-2']) {
      const answers = await gets(from, `http://${ip}/`, 12);
      assert.equal(new Set(answers).size, 1, `${from}: ${answers}`);
      assert.match(answers[0], /^web-[12]-/);
    }
  });

  // Each node's proxy decides for its own pods: a Local policy keeps each client on its own node.
  it("keeps internalTrafficPolicy Local on each client's own node", async () => {
    const ip = await clusterIP('local');
    for (const [i, from] of ['client-1', 'client-2'].entries()) {
      const answers = await gets(from, `http://${ip}/`, 12);
      assert.ok(
        answers.every((a) => a.startsWith(`web-${i + 1}-`)),
        `${from}: ${answers}`,
      );
    }
  });

  it('refuses a Service without endpoints at once, from a pod and from the host', async () => {
    const ip = await clusterIP('empty');
    const fromPod = await gets('client-2', `http://${ip}/`, 1);
    assert.match(fromPod.join('\n'), /refused/i);
    const code = await new Promise<string>((resolve) => {
      const s = connect({ host: ip, port: 80, timeout: 10_000 });
      s.on('connect', () => resolve('connected'));
      s.on('timeout', () => resolve('timeout'));
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    }).finally(() => undefined);
    assert.equal(code, 'ECONNREFUSED');
  });

  it('reaches a pod on the other node by its pod IP', async () => {
    const target = Object.keys(ips).find((n) => n.startsWith('web-2-'))!;
    assert.deepEqual(await gets('client-1', `http://${ips[target]}:8080/`, 1), [target]);
  });

  it('runs kubectl get pods in a pod with its own service account (in-cluster config)', async () => {
    const out = await inPod('kubectl', '/kubectl get pods -o name');
    assert.match(out, /^pod\/client-1$/m);
    assert.match(out, /^pod\/kubectl$/m);
    const denied = await kubectl(cluster!.kubeconfig, [
      'exec',
      'kubectl',
      '--',
      '/kubectl',
      'get',
      'secrets',
    ]);
    assert.match(denied.stderr + denied.stdout, /forbidden/i);
  });

  it('keeps the EndpointSlices of a Service that does not change: one name, one resourceVersion', async () => {
    const slices = async () =>
      (await json('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web')).items.map(
        (s: any) => `${s.metadata.name}@${s.metadata.resourceVersion}`,
      );
    const first = await slices();
    assert.equal(first.length, 1, first.join(' '));
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await slices(), first);
  });

  it('follows a scale-down: the ClusterIP answers only from the backends left', async () => {
    const ip = await clusterIP('web');
    await ok(['scale', 'deployment/web-2', '--replicas=0']);
    const t0 = Date.now();
    await waitUntil(
      async () => {
        const answers = await gets('client-2', `http://${ip}/`, 8);
        return answers.length === 8 && answers.every((a) => a.startsWith('web-1-'));
      },
      60_000,
      'only node 1 answering',
    );
    console.log(
      `      scale-down followed after ${Date.now() - t0} ms (kubectl scale to 8 answers from web-1)`,
    );
  });

  it('removes what it added to the kernel when it stops', async () => {
    const pods = nodeIPs.length;
    await cluster!.cleanup();
    cluster = undefined;
    const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
    for (let i = 0; i < pods; i++) {
      assert.doesNotMatch(tables, new RegExp(`\\b${nodeProxyRules(rules, i).table}\\b`));
      assert.equal(existsSync(`/sys/class/net/${bridges[i]}`), false, `bridge ${bridges[i]} is gone`);
    }
    for (const t of ['nat', 'filter'])
      assert.doesNotMatch(execFileSync('iptables-save', ['-t', t], { encoding: 'utf8' }), /TKEN\d/);
    assert.equal(hasUnreachableRoute(serviceCIDR), false);
    assert.equal(
      execFileSync('ip', ['route', 'show', 'exact', serviceCIDR], { encoding: 'utf8' }).trim(),
      '',
    );
    assert.deepEqual(sysctls(), sysctlsBefore);
  });
});
