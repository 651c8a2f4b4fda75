// End to end in network namespaces: a real apiserver, a Service and an
// EndpointSlice whose endpoints are TCP servers in a "pod" namespace (a veth
// into a "node" namespace), the proxy programming the node namespace, and
// connections from the node namespace to the ClusterIP. All traffic stays in
// the namespaces this test makes.
import { strict as assert } from 'node:assert';
import { type ChildProcess } from 'node:child_process';
import { startTestAPIServer, type TestAPIServer } from '../apiserver/server/testing';
import { Client } from '../shared/client';
import { logger } from '../shared/log';
import { MetricsRegistry } from '../shared/metrics/registry';
import { IptablesBackend, NftablesBackend, type ProxyBackend } from './backend';
import { proxyMetrics } from './metrics';
import { Proxier } from './proxier';
import {
  Netns,
  commandAvailable,
  linkNamespaces,
  netnsAvailable,
  removeStaleNamespaces,
  stopProcess,
  tcpEcho,
  tcpProbe,
} from './netns-testing';

const SERVICE_CIDR = '10.0.0.0/24';
const POD_A = '10.244.1.5';
const POD_B = '10.244.1.6';

const endpointSlice = (ips: string[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: 'node-a', conditions: { ready: true } })),
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});

const modes: [string, string, (ns: Netns) => ProxyBackend][] = [
  ['nftables', 'nft', (ns) => new NftablesBackend(ns.runner(), 'tkube-proxy-e2e')],
  ['iptables', 'iptables-restore', (ns) => new IptablesBackend(ns.runner(), 'TKUBE')],
];

for (const [mode, tool, backendIn] of modes) {
  describe(`service proxy end to end (${mode}, network namespaces)`, function () {
    this.timeout(60_000);
    let api: TestAPIServer;
    let client: Client;
    let node: Netns;
    let pod: Netns;
    let proxier: Proxier | undefined;
    const servers: ChildProcess[] = [];

    before(async function () {
      if (!netnsAvailable() || !commandAvailable(tool)) this.skip();
      removeStaleNamespaces();
      node = Netns.create(`${mode}-node`);
      pod = Netns.create(`${mode}-pod`);
      linkNamespaces(node, '10.244.1.1', pod, [POD_A, POD_B]);
      // The node routes the Service CIDR somewhere; the proxy's DNAT decides where it really goes.
      node.sh('ip', 'route', 'add', SERVICE_CIDR, 'dev', 'veth0');
      // The node forwards the pod's traffic (this namespace's own sysctl).
      node.sh('sysctl', '-qw', 'net.ipv4.ip_forward=1');
      servers.push(await tcpEcho(pod, POD_A, 8080), await tcpEcho(pod, POD_B, 8080));
      api = await startTestAPIServer({ serviceClusterIpRange: SERVICE_CIDR });
      client = Client.create(api.config, { qps: -1, http2: false });
    });

    after(async () => {
      await proxier?.stop();
      await client?.close();
      await api?.stop();
      for (const s of servers) await stopProcess(s);
      node?.delete();
      pod?.delete();
    });

    it('reaches the backends through the ClusterIP, refuses a Service without endpoints, follows a scale-down, hairpins', async () => {
      const services = client.resource('services').namespace('default');
      const web: any = await services.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      });
      const empty: any = await services.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'empty' },
        spec: { ports: [{ port: 80 }] },
      });
      const slices = client.resource('endpointslices.discovery.k8s.io').namespace('default');
      await slices.create(endpointSlice([POD_A, POD_B]));

      proxier = new Proxier({
        client,
        backend: backendIn(node),
        conntrack: node.runner(),
        model: {
          nodeName: 'node-a',
          nodeIPs: [],
          clusterCIDRs: ['10.244.0.0/16'],
          serviceCIDRs: [SERVICE_CIDR],
          masqueradeAll: false,
          nodePortAddresses: [],
        },
        minSyncPeriodMs: 1000,
        syncPeriodMs: 30_000,
        metrics: proxyMetrics(new MetricsRegistry({ currentVersion: '1.36' })),
        log: logger('proxy-test'),
      });
      await proxier.start();

      const vip = web.spec.clusterIP as string;
      const seen = new Set<string>();
      for (let i = 0; i < 30 && seen.size < 2; i++) seen.add(await tcpProbe(node, vip, 80));
      assert.deepEqual([...seen].sort(), [POD_A, POD_B], 'balanced over both endpoints');

      assert.equal(
        await tcpProbe(node, empty.spec.clusterIP, 80),
        'refused',
        'no endpoints: refused at once',
      );
      assert.equal(await tcpProbe(node, vip, 81), 'refused', 'a port the Service does not have');
      // An address of the range that no Service of this test holds.
      const held = new Set([web.spec.clusterIP, empty.spec.clusterIP]);
      const unallocated = [250, 249, 248]
        .map((n) => SERVICE_CIDR.replace(/0\/24$/, String(n)))
        .find((ip) => !held.has(ip))!;
      assert.equal(await tcpProbe(node, unallocated, 80), 'refused', 'an unallocated ClusterIP');

      // Scale down: the endpoint goes from the slice, the proxy follows.
      const current: any = await slices.get('web-1');
      await slices.update({ ...endpointSlice([POD_A]), metadata: current.metadata });
      const changed = Date.now();
      let streak = 0;
      while (streak < 10 && Date.now() - changed < 30_000)
        streak = (await tcpProbe(node, vip, 80)) === POD_A ? streak + 1 : 0;
      assert.equal(streak, 10, 'only the remaining endpoint answers');

      // Hairpin: the pod reaches itself through its Service (masqueraded, else the reply skips the node).
      for (let i = 0; i < 3; i++) assert.equal(await tcpProbe(pod, vip, 80), POD_A, 'hairpin');

      // The last endpoint goes: refused, not a timeout.
      await slices.delete('web-1');
      const deadline = Date.now() + 10_000;
      let answer = '';
      while (Date.now() < deadline && (answer = await tcpProbe(node, vip, 80)) !== 'refused');
      assert.equal(answer, 'refused');
    });
  });
}
