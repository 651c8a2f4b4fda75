// A real apiserver process and real nodeagent processes (fake runtime) on free
// ports: registration with real machine facts, heartbeats (Lease and status),
// the kubelet ports, pods bound to the node running and terminating
// gracefully, static pods with mirror pods, and `kubectl logs` / `kubectl get
// nodes -o wide` from the real kubectl.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { isNotFound, StatusError } from '../shared/client/errors';
import type { KubeObject } from '../shared/client/types';
import {
  freePort,
  startAPIServerProcess,
  startProcess,
  tempDir,
  type APIServerProc,
  type Proc,
} from './support/processes';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';

interface AgentProc extends Proc {
  node: string;
  port: number;
  readOnlyPort: number;
  healthzPort: number;
  rootDir: string;
}

describe('nodeagent: a node agent against a real apiserver', function () {
  this.timeout(120_000);
  let srv: APIServerProc;
  let dir: string;
  let client: Client;
  let agent: AgentProc;
  let manifests: string;
  const node = `e2e-node-${process.pid}`;
  const haveKubectl = kubectlAvailable();

  const pods = () => client.resource('pods').namespace('default');

  async function startAgent(
    name: string,
    extra: string[] = [],
    ports?: { readOnly?: number; healthz?: number },
  ): Promise<AgentProc> {
    const port = await freePort();
    const readOnlyPort = ports?.readOnly ?? (await freePort());
    const healthzPort = ports?.healthz ?? (await freePort());
    const rootDir = join(dir, name);
    const p = startProcess(
      'nodeagent',
      [
        '--kubeconfig',
        srv.kubeconfig,
        '--hostname-override',
        name,
        '--node-ip',
        '127.0.0.1',
        '--address',
        '127.0.0.1',
        '--port',
        String(port),
        '--read-only-port',
        String(readOnlyPort),
        '--healthz-port',
        String(healthzPort),
        '--root-dir',
        rootDir,
        '--client-ca-file',
        join(srv.dir, 'certs', 'ca.crt'),
        '--anonymous-auth=false',
        '--node-status-update-frequency',
        '1s',
        ...extra,
      ],
      dir,
    );
    return { ...p, node: name, port, readOnlyPort, healthzPort, rootDir };
  }

  async function getNode(name: string): Promise<KubeObject | undefined> {
    try {
      return await client.resource('nodes').get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  const ready = (n: KubeObject | undefined) =>
    n?.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True';

  /** GET on the agent's HTTPS port as the apiserver's admin (cluster CA client certificate). */
  async function secureGet(path: string, withCert = true): Promise<{ status: number; body: string }> {
    const c = loadKubeconfig(srv.kubeconfig);
    const a = withCert
      ? new Agent({
          connect: {
            cert: c.certPem,
            key: c.keyPem,
            ca: readFileSync(join(agent.rootDir, 'pki', 'kubelet.crt'), 'utf8'),
          },
        })
      : new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const r = await request(`https://127.0.0.1:${agent.port}${path}`, { dispatcher: a });
      return { status: r.statusCode, body: await r.body.text() };
    } finally {
      await a.close();
    }
  }

  async function plainGet(port: number, path: string): Promise<{ status: number; body: string }> {
    const r = await request(`http://127.0.0.1:${port}${path}`);
    return { status: r.statusCode, body: await r.body.text() };
  }

  async function podRunning(name: string): Promise<KubeObject | undefined> {
    const p = await pods().get(name);
    return p.status?.phase === 'Running' && p.status?.containerStatuses?.every((c: any) => c.ready)
      ? p
      : undefined;
  }

  before(async function () {
    dir = tempDir('nodeagent');
    srv = await startAPIServerProcess({ args: ['--kubelet-preferred-address-types', 'InternalIP,Hostname'] });
    // HTTP/1.1: undici's HTTP/2 client cannot send a DELETE with a body (see the nodeagent's client).
    client = Client.create(loadKubeconfig(srv.kubeconfig), {
      qps: -1,
      contentType: 'application/json',
      http2: false,
    });
    // What the controller manager would create: the default service account.
    await client
      .resource('serviceaccounts')
      .namespace('default')
      .create({ metadata: { name: 'default' } });
    manifests = join(dir, 'manifests');
    mkdirSync(manifests, { recursive: true });
    writeFileSync(
      join(manifests, 'static-web.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\n  namespace: kube-system\nspec:\n  containers:\n  - name: web\n    image: nginx:1.25\n',
    );
    const config = join(dir, 'kubelet.yaml');
    // A short lease so renewals show within the test (renewed every 2 s).
    writeFileSync(
      config,
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nnodeLeaseDurationSeconds: 8\nmaxPods: 50\n',
    );
    // A host resolv.conf whose search line leaves no room for the cluster's domains.
    const resolvConf = join(dir, 'resolv.conf');
    writeFileSync(
      resolvConf,
      `nameserver 127.0.0.1\nsearch ${Array.from({ length: 30 }, (_, i) => `d${i}.example`).join(' ')}\n`,
    );
    agent = await startAgent(node, [
      '--resolv-conf',
      resolvConf,
      '--cluster-domain',
      'cluster.local',
      '--pod-manifest-path',
      manifests,
      '--file-check-frequency',
      '1s',
      '--pod-cidr',
      '10.244.7.0/24',
      '--config',
      config,
    ]);
    await Promise.race([
      waitUntil(async () => ready(await getNode(node)), 30_000, 'the node to be Ready'),
      agent.exited.then((code) => {
        throw new Error(`nodeagent exited with ${code}; see ${agent.logFile}`);
      }),
    ]);
  });

  after(async () => {
    await agent?.stop();
    await client?.close();
    await srv?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('registers the Node with real capacity, nodeInfo, addresses and the kubelet port', async () => {
    const n: any = await getNode(node);
    assert.ok(Number(n.status.capacity.cpu) > 0);
    assert.match(n.status.capacity.memory, /^\d+(Ki|Mi)?$/);
    assert.ok(parseInt(n.status.capacity.memory, 10) > 0);
    assert.ok(parseInt(n.status.capacity['ephemeral-storage'], 10) > 0);
    assert.equal(n.status.capacity.pods, '50', 'maxPods from the --config file');
    assert.ok(
      parseInt(n.status.allocatable.memory, 10) < parseInt(n.status.capacity.memory, 10),
      'allocatable keeps back memory.available<100Mi',
    );
    assert.equal(n.metadata.labels['kubernetes.io/hostname'], node);
    assert.equal(n.metadata.labels['kubernetes.io/os'], 'linux');
    assert.deepEqual(n.status.addresses, [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: node },
    ]);
    assert.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, agent.port);
    assert.equal(n.status.nodeInfo.containerRuntimeVersion, 'fake://0.1.0');
    assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.36.3');
    assert.ok(n.status.nodeInfo.kernelVersion && n.status.nodeInfo.osImage && n.status.nodeInfo.bootID);
    assert.deepEqual(n.spec.podCIDRs, ['10.244.7.0/24']);
    assert.deepEqual(
      n.status.conditions.map((c: any) => [c.type, c.status, c.reason]),
      [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
        ['Ready', 'True', 'KubeletReady'],
      ],
    );
  });

  it("warns on the Node when --resolv-conf's search line leaves no room for the cluster's (CheckLimitsForResolvConf)", async () => {
    const event = await waitUntil(
      async () => {
        const events = await client.resource('events.events.k8s.io').namespace('default').list();
        return events.items.find(
          (e: any) =>
            e.regarding?.kind === 'Node' &&
            e.regarding?.name === node &&
            e.reason === 'CheckLimitsForResolvConf',
        );
      },
      20_000,
      'the CheckLimitsForResolvConf event',
    );
    assert.equal((event as any).type, 'Warning');
    assert.equal(
      (event as any).note,
      `Resolv.conf file '${join(dir, 'resolv.conf')}' contains search line consisting of more than 29 domains!`,
    );
  });

  it('renews its Lease in kube-node-lease, owned by the Node', async () => {
    const leases = client.resource('leases.coordination.k8s.io').namespace('kube-node-lease');
    const first: any = await waitUntil(
      async () => {
        const l: any = await leases.get(node);
        return l.metadata.ownerReferences?.length ? l : undefined;
      },
      15_000,
      'the lease with its owner',
    );
    const n: any = await getNode(node);
    assert.deepEqual(first.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: node, uid: n.metadata.uid },
    ]);
    assert.equal(first.spec.holderIdentity, node);
    assert.equal(first.spec.leaseDurationSeconds, 8);
    await waitUntil(
      async () => (await leases.get(node)).spec.renewTime > first.spec.renewTime,
      10_000,
      'a renewal',
    );
  });

  it('answers on its three ports as configured', async () => {
    assert.deepEqual(await plainGet(agent.healthzPort, '/healthz'), { status: 200, body: 'ok' });
    assert.equal((await plainGet(agent.readOnlyPort, '/healthz')).status, 200);
    const roPods = JSON.parse((await plainGet(agent.readOnlyPort, '/pods')).body);
    assert.equal(roPods.kind, 'PodList');
    assert.equal(
      (await plainGet(agent.readOnlyPort, '/containerLogs/default/x/y')).status,
      404,
      'no logs on the read-only port',
    );
    // The secure port: x509 (the cluster CA signs the admin certificate), anonymous requests refused.
    assert.deepEqual(await secureGet('/healthz'), { status: 200, body: 'ok' });
    assert.deepEqual(await secureGet('/pods', false), { status: 401, body: 'Unauthorized' });
    const summary = JSON.parse((await secureGet('/stats/summary')).body);
    assert.equal(summary.node.nodeName, node);
    assert.ok(summary.node.memory.availableBytes > 0);
    const spec = JSON.parse((await secureGet('/spec')).body);
    assert.ok(spec.num_cores > 0 && spec.memory_capacity > 0);
    assert.match((await secureGet('/metrics')).body, new RegExp(`kubelet_node_name\\{node="${node}"\\} 1`));
    assert.match((await secureGet('/metrics/resource')).body, /node_memory_working_set_bytes/);
    const configz = JSON.parse((await secureGet('/configz')).body);
    assert.equal(configz.kubeletconfig.nodeLeaseDurationSeconds, 8);
    // Through the apiserver: nodes/<name>/proxy.
    const proxied = await client.rest.raw({ method: 'GET', path: `/api/v1/nodes/${node}/proxy/healthz` });
    assert.equal(proxied.body.toString(), 'ok');
    // A request with a body is streamed upstream and its answer comes back whole.
    const posted = await client.rest.raw({
      method: 'POST',
      path: `/api/v1/nodes/${node}/proxy/healthz`,
      rawBody: Buffer.from('x'.repeat(100_000)),
      contentType: 'text/plain',
    });
    assert.equal(posted.body.toString(), 'ok');
  });

  it('runs a pod bound to the node: Running with an address, statuses and conditions', async () => {
    await pods().create({
      metadata: { name: 'web', annotations: { 'tkube.io/fake-log-interval': '1' } },
      spec: {
        nodeName: node,
        initContainers: [{ name: 'init', image: 'busybox:1.36' }],
        containers: [{ name: 'nginx', image: 'nginx:1.25' }],
      },
    });
    const p: any = await waitUntil(() => podRunning('web'), 20_000, 'web to run');
    assert.match(p.status.podIP, /^10\.244\.7\.\d+$/);
    assert.deepEqual(p.status.podIPs, [{ ip: p.status.podIP }]);
    assert.equal(p.status.hostIP, '127.0.0.1');
    assert.equal(p.status.qosClass, 'BestEffort', 'kept');
    assert.ok(p.status.startTime);
    const c = p.status.containerStatuses[0];
    assert.match(c.containerID, /^fake:\/\/[0-9a-f]{64}$/);
    assert.match(c.imageID, /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    assert.equal(c.started, true);
    assert.equal(c.restartCount, 0);
    assert.ok(c.state.running.startedAt);
    assert.equal(p.status.initContainerStatuses[0].state.terminated.exitCode, 0);
    const types = p.status.conditions
      .filter((x: any) => x.status === 'True')
      .map((x: any) => x.type)
      .sort();
    assert.deepEqual(types, ['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'Ready']);
    // Events of the kubelet (written by a rate-limited background recorder, so they may trail the status).
    const want = ['Pulling', 'Pulled', 'Created', 'Started'];
    let reasons: string[] = [];
    await waitUntil(
      async () => {
        const events = await client.resource('events.events.k8s.io').namespace('default').list();
        reasons = events.items.filter((e: any) => e.regarding?.name === 'web').map((e: any) => e.reason);
        return want.every((r) => reasons.includes(r));
      },
      10_000,
      'the kubelet events of web',
    ).catch(() => undefined);
    for (const r of want) assert.ok(reasons.includes(r), `event ${r} in ${reasons.join(',')}`);
  });

  it('runs a pod bound through pods/binding, and completes a Job-style pod', async () => {
    await pods().create({
      metadata: { name: 'bound', annotations: { 'tkube.io/fake-run-seconds': '1' } },
      spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'busybox:1.36' }] },
    });
    await pods().bind('bound', { name: node });
    const done: any = await waitUntil(
      async () => {
        const p: any = await pods().get('bound');
        return p.status?.phase === 'Succeeded' ? p : undefined;
      },
      20_000,
      'the pod to succeed',
    );
    assert.equal(done.status.containerStatuses[0].state.terminated.reason, 'Completed');
  });

  /** A pod bound by name to the node, its one container asking for these host ports (and resources). */
  const boundPod = (name: string, ports: any[], requests?: Record<string, string>) =>
    pods().create({
      metadata: { name },
      spec: {
        nodeName: node,
        containers: [
          {
            name: 'c',
            image: 'busybox:1.36',
            ports,
            resources: requests ? { requests, limits: requests } : undefined,
          },
        ],
      },
    });
  const podFailed = async (name: string) => {
    const p: any = await pods().get(name);
    return p.status?.phase === 'Failed' ? p : undefined;
  };

  it('rejects a pod bound to it whose host port a running pod holds (NodePorts); another protocol or host IP runs', async () => {
    await boundPod('port-holder', [{ containerPort: 80, hostPort: 21017 }]);
    await waitUntil(() => podRunning('port-holder'), 20_000, 'port-holder to run');
    await boundPod('port-taker', [{ containerPort: 8080, hostPort: 21017, protocol: 'TCP' }]);
    const rejected: any = await waitUntil(() => podFailed('port-taker'), 20_000, 'port-taker to be rejected');
    assert.equal(rejected.status.reason, 'NodePorts');
    assert.equal(
      rejected.status.message,
      "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    );
    assert.equal(rejected.status.containerStatuses?.[0]?.state?.running, undefined);
    // The holder binds every address on TCP: UDP on the same port is free.
    await boundPod('port-udp', [{ containerPort: 8080, hostPort: 21017, protocol: 'UDP' }]);
    await waitUntil(() => podRunning('port-udp'), 20_000, 'port-udp to run');
    // Specific host IPs do not overlap each other.
    await boundPod('port-ip-a', [{ containerPort: 80, hostPort: 21018, hostIP: '127.0.0.1' }]);
    await boundPod('port-ip-b', [{ containerPort: 80, hostPort: 21018, hostIP: '127.0.0.2' }]);
    await waitUntil(() => podRunning('port-ip-a'), 20_000, 'port-ip-a to run');
    await waitUntil(() => podRunning('port-ip-b'), 20_000, 'port-ip-b to run');
    // Once the holder is gone, a new pod gets the port.
    await pods().delete('port-holder', { gracePeriodSeconds: 0 });
    await waitUntil(
      async () => !(await pods().list()).items.some((p) => p.metadata.name === 'port-holder'),
      20_000,
      'port-holder to be gone',
    );
    await boundPod('port-taker-2', [{ containerPort: 8080, hostPort: 21017 }]);
    await waitUntil(() => podRunning('port-taker-2'), 20_000, 'port-taker-2 to run');
  });

  it('makes an extended resource advertised in its capacity allocatable, and rejects pods asking for more', async () => {
    await client
      .resource('nodes')
      .patch(node, [{ op: 'add', path: '/status/capacity/example.com~1dongle', value: '4' }], 'json', {
        subresource: 'status',
      });
    await waitUntil(
      async () => (await getNode(node))?.status?.allocatable?.['example.com/dongle'] === '4',
      20_000,
      'the dongles to be allocatable',
    );
    await boundPod('dongles-3', [], { 'example.com/dongle': '3' });
    await waitUntil(() => podRunning('dongles-3'), 20_000, 'dongles-3 to run');
    await boundPod('dongles-2', [], { 'example.com/dongle': '2' });
    const rejected: any = await waitUntil(() => podFailed('dongles-2'), 20_000, 'dongles-2 to be rejected');
    assert.equal(rejected.status.reason, 'OutOfexample.com/dongle');
    assert.equal(
      rejected.status.message,
      "Pod was rejected: Node didn't have enough resource: example.com/dongle, requested: 2, used: 3, capacity: 4",
    );
  });

  it('terminates a deleted pod gracefully: the grace period is observed, then it is gone', async () => {
    await pods().create({
      metadata: { name: 'slow', annotations: { 'tkube.io/fake-stop-seconds': '60' } },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'app', image: 'nginx:1.25' }],
      },
    });
    await waitUntil(() => podRunning('slow'), 20_000, 'slow to run');
    const t0 = Date.now();
    await pods().delete('slow');
    await new Promise((r) => setTimeout(r, 1000));
    const during: any = await pods().get('slow');
    assert.ok(during.metadata.deletionTimestamp, 'still there, being deleted');
    assert.equal(during.metadata.deletionGracePeriodSeconds, 2);
    await waitUntil(
      async () => {
        try {
          await pods().get('slow');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      15_000,
      'slow to be gone',
    );
    const took = Date.now() - t0;
    assert.ok(took >= 1900, `gone after ${took} ms, before the 2 s grace period`);
  });

  it('runs a static pod from --pod-manifest-path and shows it as a mirror pod', async () => {
    const sys = client.resource('pods').namespace('kube-system');
    const mirror: any = await waitUntil(
      async () => {
        try {
          const p: any = await sys.get(`static-web-${node}`);
          return p.status?.phase === 'Running' ? p : undefined;
        } catch {
          return undefined;
        }
      },
      20_000,
      'the mirror pod to run',
    );
    assert.ok(mirror.metadata.annotations['kubernetes.io/config.mirror']);
    assert.equal(mirror.metadata.annotations['kubernetes.io/config.source'], 'file');
    const n: any = await getNode(node);
    assert.deepEqual(mirror.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: node, uid: n.metadata.uid, controller: true },
    ]);
    assert.match(mirror.status.podIP, /^10\.244\.7\./);
    // Deleting the mirror pod does not stop the static pod: the agent puts it back.
    await sys.delete(`static-web-${node}`, { gracePeriodSeconds: 0 });
    await waitUntil(
      async () => {
        try {
          const p: any = await sys.get(`static-web-${node}`);
          return p.metadata.uid !== mirror.metadata.uid;
        } catch {
          return false;
        }
      },
      15_000,
      'the mirror pod to come back',
    );
  });

  it('serves `kubectl logs` (the real kubectl) through the apiserver, and says which container is meant', async function () {
    if (!haveKubectl) this.skip();
    const out = await kubectl(srv.kubeconfig, ['logs', 'web', '-c', 'nginx']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^fake container nginx started$/m);
    await waitUntil(
      async () =>
        /is running \(\d+s\)/.test((await kubectl(srv.kubeconfig, ['logs', 'web', '-c', 'nginx'])).stdout),
      10_000,
      'periodic lines',
    );
    const init = await kubectl(srv.kubeconfig, ['logs', 'web', '-c', 'init']);
    assert.match(init.stdout, /fake container init exited with code 0/);
    const tail = await kubectl(srv.kubeconfig, ['logs', 'web', '-c', 'nginx', '--tail=1', '--timestamps']);
    assert.match(
      tail.stdout,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z fake container nginx is running \(\d+s\)\n$/,
    );
    const follow = await kubectl(srv.kubeconfig, ['logs', 'web', '-c', 'nginx', '-f', '--tail=0'], {
      timeoutMs: 2500,
    });
    assert.match(follow.stdout, /is running/, 'follow streams new lines');
    // The only container is the default; without a container on a pod with two, the apiserver's 400.
    const only = await client.rest.raw({
      method: 'GET',
      path: '/api/v1/namespaces/default/pods/web/log?tailLines=1',
    });
    assert.match(only.body.toString(), /fake container nginx/);
    await pods().create({
      metadata: { name: 'multi' },
      spec: {
        nodeName: node,
        initContainers: [{ name: 'setup', image: 'busybox:1.36' }],
        containers: [
          { name: 'a', image: 'nginx:1.25' },
          { name: 'b', image: 'redis:7' },
        ],
      },
    });
    const err = await client.rest
      .raw({ method: 'GET', path: '/api/v1/namespaces/default/pods/multi/log' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof StatusError, String(err));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'a container name must be specified for pod multi, choose one of: [setup a b]');
    const wrong = await client.rest
      .raw({ method: 'GET', path: '/api/v1/namespaces/default/pods/multi/log?container=c' })
      .catch((e: unknown) => e);
    assert.ok(
      wrong instanceof StatusError &&
        wrong.code === 400 &&
        wrong.message === 'container c is not valid for pod multi',
      String(wrong),
    );
  });

  describe('pods/log over a WebSocket (clients without SPDY)', () => {
    /** Reads a pod's log over a WebSocket with the given subprotocols until the server closes it. */
    async function wsLog(name: string, protocols: string[], query: string) {
      const { default: WebSocket } = await import('ws');
      const c = loadKubeconfig(srv.kubeconfig);
      const url = `${c.server.replace(/^https/, 'wss')}/api/v1/namespaces/default/pods/${name}/log?${query}`;
      const ws = new WebSocket(url, protocols, { ca: c.caPem, cert: c.certPem, key: c.keyPem });
      const messages: { data: Buffer; binary: boolean }[] = [];
      ws.on('message', (d: Buffer, binary: boolean) => messages.push({ data: Buffer.from(d), binary }));
      const code = await new Promise<number>((resolve, reject) => {
        ws.on('close', (closeCode: number) => resolve(closeCode));
        ws.on('error', reject);
      });
      return { protocol: ws.protocol, messages, code };
    }

    before(async () => {
      await pods().create({
        metadata: {
          name: 'ws-log',
          // Runs 4 s, one line a second: a follow ends with the container.
          annotations: { 'tkube.io/fake-run-seconds': '4', 'tkube.io/fake-log-interval': '1' },
        },
        spec: { nodeName: node, restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] },
      });
      await waitUntil(async () => !!(await podRunning('ws-log')), 20_000, 'ws-log Running');
    });

    it('binary.k8s.io: follows the log in binary messages and closes when the container ends', async () => {
      const r = await wsLog('ws-log', ['binary.k8s.io'], 'container=c&follow=true');
      assert.equal(r.protocol, 'binary.k8s.io');
      assert.equal(r.code, 1000, 'a normal close when the log ends');
      assert.deepEqual(r.messages[0], { data: Buffer.alloc(0), binary: true }, 'an empty message first');
      assert.ok(r.messages.every((m) => m.binary && m.data.length <= 2048));
      const text = Buffer.concat(r.messages.map((m) => m.data)).toString();
      assert.match(text, /^fake container c started$/m);
      assert.match(text, /^fake container c exited with code 0$/m, 'followed to the end');
    });

    it('base64.binary.k8s.io: base64 text messages; no protocol: binary; others refused', async () => {
      const b = await wsLog('ws-log', ['base64.binary.k8s.io'], 'container=c&follow=true&timestamps=true');
      assert.equal(b.protocol, 'base64.binary.k8s.io');
      assert.equal(b.code, 1000);
      assert.ok(
        b.messages.every((m) => !m.binary),
        'text messages',
      );
      assert.equal(b.messages[0].data.toString(), '');
      const text = Buffer.concat(b.messages.map((m) => Buffer.from(m.data.toString(), 'base64'))).toString();
      assert.match(text, /^\d{4}-\d\d-\d\dT\S+Z fake container c started$/m);
      const none = await wsLog('ws-log', [], 'container=c');
      assert.equal(none.protocol, '');
      assert.match(Buffer.concat(none.messages.map((m) => m.data)).toString(), /fake container c started/);
      await assert.rejects(
        wsLog('ws-log', ['channel.k8s.io'], 'container=c'),
        /Unexpected server response: 403/,
      );
    });
  });

  it('answers `kubectl exec` on the fake runtime with a clear error, not a hang', async function () {
    if (!haveKubectl) this.skip();
    const envs: Record<string, string>[] = [{}, { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }];
    for (const env of envs) {
      const r = await kubectl(srv.kubeconfig, ['exec', 'web', '-c', 'nginx', '--', 'echo', 'hi'], {
        env,
        timeoutMs: 30_000,
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /exec is not supported by the fake runtime \(it runs no processes\)/);
    }
    // An init container that finished is not running: the kubelet's "container not found".
    const done = await kubectl(srv.kubeconfig, ['exec', 'web', '-c', 'init', '--', 'true'], {
      env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' },
      timeoutMs: 30_000,
    });
    assert.notEqual(done.code, 0);
    assert.match(done.stderr, /container not found \("init"\)/);
  });

  it('shows in `kubectl get nodes -o wide`', async function () {
    if (!haveKubectl) this.skip();
    const out = await kubectl(srv.kubeconfig, ['get', 'nodes', '-o', 'wide']);
    assert.equal(out.code, 0, out.stderr);
    const [header, ...rows] = out.stdout.trim().split('\n');
    assert.match(
      header,
      /NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME/,
    );
    const row = rows.find((r) => r.startsWith(`${node} `));
    assert.ok(row, out.stdout);
    const n: any = await getNode(node);
    assert.match(row!, /\sReady\s/);
    assert.match(row!, /\sv1\.36\.3\s+127\.0\.0\.1\s+<none>\s/);
    assert.ok(row!.includes(n.status.nodeInfo.osImage));
    assert.ok(row!.includes(n.status.nodeInfo.kernelVersion));
    assert.match(row!, /fake:\/\/0\.1\.0$/);
  });

  it('with ports set to 0 serves only the secure port; SIGTERM leaves the Node and its pods as they are', async () => {
    const other = await startAgent(`${node}-b`, ['--pod-cidr', '10.244.8.0/24'], { readOnly: 0, healthz: 0 });
    try {
      await waitUntil(async () => ready(await getNode(other.node)), 20_000, 'the second node to be Ready');
      await pods().create({
        metadata: { name: 'on-b' },
        spec: { nodeName: other.node, containers: [{ name: 'c', image: 'nginx:1.25' }] },
      });
      await waitUntil(() => podRunning('on-b'), 20_000, 'on-b to run');
      const n: any = await getNode(other.node);
      assert.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, other.port);
      // Nothing listens where the other ports would have been; the secure one answers.
      const c = loadKubeconfig(srv.kubeconfig);
      const a = new Agent({ connect: { cert: c.certPem, key: c.keyPem, rejectUnauthorized: false } });
      const r = await request(`https://127.0.0.1:${other.port}/healthz`, { dispatcher: a });
      assert.equal(await r.body.text(), 'ok');
      await a.close();
      const log = readFileSync(other.logFile, 'utf8');
      assert.match(log, /"readOnlyPort":0,"healthzPort":0/);
    } finally {
      assert.equal(await other.stop('SIGTERM'), 0, 'a clean exit on SIGTERM');
    }
    const stopped: any = await getNode(other.node);
    assert.ok(ready(stopped), 'the agent does not mark its own node NotReady');
    const p: any = await pods().get('on-b');
    assert.equal(p.status.phase, 'Running', 'pods stay as they are in the API');
  });
});
