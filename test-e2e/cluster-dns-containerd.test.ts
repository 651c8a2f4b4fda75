// Cluster DNS in a local cluster on containerd, as `tkube up` runs it: the
// kube-dns Service at the service range's .10 with the launcher's
// EndpointSlice, each pod's /etc/resolv.conf per dnsPolicy and its /etc/hosts
// as the node agent writes them, and from a busybox pod nslookup of Services
// by full and short name, a headless Service, a pod under its subdomain, SRV
// and PTR, asked of the DNS server's own address (node 0's bridge gateway: no
// service proxy needed), and, where the service proxy can run, through the
// pod's own resolv.conf nameserver: the kube-dns ClusterIP. The server forwards
// nothing (--upstream none): no name is asked off this machine. The Service
// CIDR is a block of 198.18.0.0/15 of this process, routed unreachable before
// anything starts and through the first node's bridge once the proxy programmed
// it; the ClusterIP is checked to be routed there before a pod dials it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseResolvConf } from '../nodeagent/pods/dns';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { clusterDNSIP } from '../shared/cluster/cluster-dns';
import { serviceProxyUnavailable } from '../shared/cluster/cluster-proxy';
import { indexedIP, podCIDRGateway } from '../shared/cluster/node-addresses';
import { findOnPath, waitUntil } from '../shared/cluster/process';
import { testServiceCIDR } from '../shared/cluster/service-route.test-support';
import { sleeperPod, startCluster } from './support/cluster';
import { kubectl, kubectlAvailable, kubectlOn } from './support/kubectl';

describe('cluster DNS on containerd: kube-dns, pod resolv.conf and hosts, answers to busybox', function () {
  this.timeout(240_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  const podCIDR = testPodCIDR();
  const gateway = podCIDRGateway(podCIDR);
  const { cidr: serviceCIDR } = testServiceCIDR(24, 1);
  const dnsIP = clusterDNSIP(serviceCIDR);
  const kubernetesIP = indexedIP(serviceCIDR, 1);
  const noProxy = serviceProxyUnavailable() ?? (findOnPath('nft') ? undefined : 'nft is not installed');

  const { ok, json } = kubectlOn(() => cluster.kubeconfig);
  const exec = (pod: string, ...cmd: string[]) => ok(['exec', pod, '--', ...cmd]);
  const sleeper = (name: string, spec: object = {}, labels: Record<string, string> = {}) =>
    sleeperPod(name, { spec, labels });
  const service = (name: string, spec: any) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec,
  });
  const ip = (s: string) => s.replace(/\./g, '\\.');

  before(async function () {
    const why = runtimeTestsUnavailable() ?? (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the cluster DNS e2e tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    cluster = await startCluster({
      runtime: 'containerd',
      podCIDR: () => podCIDR,
      serviceCIDR,
      unreachableServiceRoute: true,
      serviceProxy: !noProxy,
      proxyRules: { table: `tkube-dns-e2e-${process.pid}`, chainPrefix: 'TKD' },
      dnsArgs: ['--upstream', 'none'],
      metricsServer: false,
      timeoutMs: 90_000,
    });
    const items = [
      sleeper('client'),
      sleeper('db-0', { hostname: 'db-0', subdomain: 'db' }, { app: 'db' }),
      sleeper('db-1', { hostname: 'db-1', subdomain: 'db' }, { app: 'db' }),
      sleeper(
        'web-1',
        { hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar'] }] },
        { app: 'web' },
      ),
      sleeper('default-policy', { dnsPolicy: 'Default' }),
      sleeper('none-policy', {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: [gateway],
          searches: ['a.example'],
          options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
        },
      }),
      sleeper('host-net', { hostNetwork: true }),
      // The cluster nameserver and three more (TEST-NET-2, never asked: the pod only sleeps).
      sleeper('many-servers', {
        dnsConfig: { nameservers: ['198.51.100.1', '198.51.100.2', '198.51.100.3'] },
      }),
      // ClusterFirst's search path and ndots, with the server's own address for the ClusterIP.
      sleeper('search-client', {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: [gateway],
          searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
          options: [{ name: 'ndots', value: '5' }],
        },
      }),
      service('web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
      service('db', {
        clusterIP: 'None',
        selector: { app: 'db' },
        ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
      }),
    ];
    await ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    await ok(['wait', '--for=condition=Ready', 'pod', '--all', '--timeout=120s']);
  });

  after(async () => {
    await cluster?.cleanup();
  });

  it('has the kube-dns Service at .10 without a selector, its EndpointSlice at the bridge gateway', async () => {
    const svc = await json('get', 'service', '-n', 'kube-system', 'kube-dns');
    assert.equal(svc.spec.clusterIP, dnsIP);
    assert.equal(svc.spec.selector, undefined);
    assert.equal(svc.metadata.labels['k8s-app'], 'kube-dns');
    assert.deepEqual(
      svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}`),
      ['dns 53/UDP', 'dns-tcp 53/TCP', 'metrics 9153/TCP'],
    );
    const slices = await json(
      'get',
      'endpointslices',
      '-n',
      'kube-system',
      '-l',
      'kubernetes.io/service-name=kube-dns',
    );
    assert.equal(slices.items.length, 1);
    assert.notEqual(
      slices.items[0].metadata.labels['endpointslice.kubernetes.io/managed-by'],
      'endpointslice-controller.k8s.io',
    );
    assert.deepEqual(slices.items[0].endpoints[0].addresses, [gateway]);
  });

  it("writes each pod's resolv.conf per dnsPolicy and its managed /etc/hosts", async () => {
    const hostText = readFileSync('/etc/resolv.conf', 'utf8');
    const host = parseResolvConf(hostText);
    const clusterSearch = ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'];
    const searches = [...new Set([...clusterSearch, ...host.searches])];
    assert.equal(
      await exec('client', 'cat', '/etc/resolv.conf'),
      `search ${searches.join(' ')}\nnameserver ${dnsIP}\noptions ndots:5\n`,
    );
    const hostFile =
      (host.searches.length ? `search ${host.searches.join(' ')}\n` : '') +
      host.servers.map((s) => `nameserver ${s}\n`).join('') +
      (host.options.length ? `options ${host.options.join(' ')}\n` : '');
    const defaultText = hostFile || hostText;
    assert.equal(await exec('default-policy', 'cat', '/etc/resolv.conf'), defaultText);
    assert.equal(
      await exec('host-net', 'cat', '/etc/resolv.conf'),
      defaultText,
      'ClusterFirst on the host network',
    );
    assert.equal(
      await exec('none-policy', 'cat', '/etc/resolv.conf'),
      `search a.example\nnameserver ${gateway}\noptions ndots:2 edns0\n`,
    );

    // kubelet's limit of 3 nameservers, and its event.
    assert.match(
      await exec('many-servers', 'cat', '/etc/resolv.conf'),
      new RegExp(
        `\\nnameserver ${ip(dnsIP)}\\nnameserver 198\\.51\\.100\\.1\\nnameserver 198\\.51\\.100\\.2\\noptions ndots:5\\n$`,
      ),
    );
    const events = await json('get', 'events', '--field-selector', 'involvedObject.name=many-servers');
    assert.ok(
      events.items.some(
        (e: any) =>
          e.reason === 'DNSConfigForming' &&
          e.type === 'Warning' &&
          e.message ===
            `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${dnsIP} 198.51.100.1 198.51.100.2`,
      ),
      JSON.stringify(events.items.map((e: any) => `${e.reason}: ${e.message}`)),
    );

    const db0 = await json('get', 'pod', 'db-0');
    const hosts = await exec('db-0', 'cat', '/etc/hosts');
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.match(
      hosts,
      new RegExp(`\\n${ip(db0.status.podIP)}\\tdb-0\\.db\\.default\\.svc\\.cluster\\.local\\tdb-0\\n`),
    );
    assert.match(
      await exec('web-1', 'cat', '/etc/hosts'),
      /\n\n# Entries added by HostAliases\.\n10\.1\.2\.3\tfoo\.local\tbar\n$/,
    );
    assert.match(
      await exec('host-net', 'cat', '/etc/hosts'),
      /^# Kubernetes-managed hosts file \(host network\)\.\n/,
    );
  });

  it('answers a busybox nslookup of Services by full and short name, headless, pod-0.<subdomain>, SRV and PTR', async () => {
    const web = (await json('get', 'service', 'web')).spec.clusterIP;
    const db0 = (await json('get', 'pod', 'db-0')).status.podIP;
    const db1 = (await json('get', 'pod', 'db-1')).status.podIP;
    // busybox's nslookup exits 1 when any query of the search path failed, as on kind: its output is what counts.
    const lookup = async (...args: string[]) => {
      const r = await kubectl(cluster.kubeconfig, ['exec', 'client', '--', 'nslookup', ...args, gateway]);
      return r.stdout + r.stderr;
    };

    assert.match(await lookup('web.default.svc.cluster.local'), new RegExp(`Address:\\s+${ip(web)}\\b`));
    // Short names through the search path (busybox's nslookup reads it only when it is given no server).
    const searched = async (name: string) => {
      const r = await kubectl(cluster.kubeconfig, ['exec', 'search-client', '--', 'nslookup', name]);
      return r.stdout + r.stderr;
    };
    assert.match(
      await searched('web'),
      new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip(web)}\\b`),
    );
    // A name with a dot busybox (since 1.28.4, upstream bug 11161) sends as it is: NXDOMAIN on
    // kind and kubeadm too; SERVFAIL here, where the server forwards nothing.
    assert.match(
      await searched('kubernetes'),
      new RegExp(
        `Name:\\s+kubernetes\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip(kubernetesIP)}\\b`,
      ),
    );
    assert.match(
      await lookup('kubernetes.default.svc.cluster.local'),
      new RegExp(`Address:\\s+${ip(kubernetesIP)}\\b`),
    );

    // Every ready endpoint of the headless Service, once the endpointslice controller listed both.
    const headless = await waitUntil(
      async () => {
        const out = await lookup('db.default.svc.cluster.local').catch(() => '');
        return out.includes(db0) && out.includes(db1) ? out : undefined;
      },
      30_000,
      'both db pods in the headless answer',
    );
    assert.match(headless, new RegExp(`Address:\\s+${ip(db0)}\\b`));
    assert.match(await lookup('db-0.db.default.svc.cluster.local'), new RegExp(`Address:\\s+${ip(db0)}\\b`));
    assert.doesNotMatch(await lookup('db-0.db.default.svc.cluster.local'), new RegExp(ip(db1)));

    const srv = await lookup('-type=SRV', '_pg._tcp.db.default.svc.cluster.local');
    assert.match(srv, /db-0\.db\.default\.svc\.cluster\.local/);
    assert.match(srv, /db-1\.db\.default\.svc\.cluster\.local/);
    assert.match(srv, /5432/);
    assert.match(
      await lookup('-type=SRV', '_http._tcp.web.default.svc.cluster.local'),
      /\b80\b[\s\S]*web\.default\.svc\.cluster\.local/,
    );

    assert.match(await lookup(web), /name = web\.default\.svc\.cluster\.local/);
    assert.match(await lookup(db0), /name = db-0\.db\.default\.svc\.cluster\.local/);

    const missing = await kubectl(cluster.kubeconfig, [
      'exec',
      'client',
      '--',
      'nslookup',
      'nothing.default.svc.cluster.local',
      gateway,
    ]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stdout + missing.stderr, /NXDOMAIN/);
  });

  it("resolves through the pod's resolv.conf nameserver, the kube-dns ClusterIP, once the service proxy DNATs it", async function () {
    if (noProxy) {
      console.warn(`skipping the ClusterIP lookups: ${noProxy}`);
      this.skip();
    }
    const bridge = cluster.containerds[0].bridge;
    const route = execFileSync('ip', ['route', 'get', dnsIP], { encoding: 'utf8' });
    assert.match(route, new RegExp(`dev ${bridge} `), `${dnsIP} is routed to the cluster's bridge: ${route}`);
    const web = (await json('get', 'service', 'web')).spec.clusterIP;
    // No server given: busybox asks the nameserver of the pod's resolv.conf.
    const own = async (name: string) => {
      const r = await kubectl(cluster.kubeconfig, ['exec', 'client', '--', 'nslookup', name]);
      return r.stdout + r.stderr;
    };
    const full = await waitUntil(
      async () => {
        const out = await own('kubernetes.default.svc.cluster.local');
        return out.includes(`Address: ${kubernetesIP}`) ? out : undefined;
      },
      30_000,
      'kubernetes.default.svc.cluster.local through the ClusterIP',
    );
    assert.match(full, new RegExp(`^Server:\\s+${ip(dnsIP)}\\n`));
    assert.match(
      await own('kubernetes'),
      new RegExp(
        `Name:\\s+kubernetes\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip(kubernetesIP)}\\b`,
      ),
    );
    assert.match(
      await own('web'),
      new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip(web)}\\b`),
    );
  });
});
