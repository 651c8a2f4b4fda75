// A pod's resolv.conf per dnsPolicy, dnsConfig and kubelet's limits: the file
// containerd writes from the CRI DNSConfig, case by case.
import assert from 'node:assert/strict';
import {
  hostResolvConfProblem,
  parseResolvConf,
  podResolverConfig,
  type ClusterDNSSettings,
  type ResolverConfig,
} from './dns';

/** containerd's resolv.conf of a sandbox (parseDNSOptions), or the host's copied when the config is empty. */
function fileText(c: ResolverConfig, host: string): string {
  if (!c.servers.length && !c.searches.length && !c.options.length) return host;
  return (
    (c.searches.length ? `search ${c.searches.join(' ')}\n` : '') +
    c.servers.map((s) => `nameserver ${s}\n`).join('') +
    (c.options.length ? `options ${c.options.join(' ')}\n` : '')
  );
}

const HOST = [
  '# written by the host',
  'nameserver 192.168.1.1',
  'search old.example',
  'nameserver 192.168.1.2',
  'search corp.example. lab.example',
  'options timeout:2',
  'options attempts:3 rotate',
  '',
].join('\n');

const cluster: ClusterDNSSettings = {
  clusterDNS: ['10.0.0.10'],
  clusterDomain: 'cluster.local',
  resolvConf: '/etc/resolv.conf',
};

const pod = (spec: any = {}) => ({ metadata: { name: 'web', namespace: 'shop', uid: 'u-1' }, spec });

describe('nodeagent/pods: a pod resolv.conf as kubelet forms it', () => {
  it("reads the host's file as kubelet does: nameservers add up, the last search and options win", () => {
    assert.deepEqual(parseResolvConf(HOST), {
      servers: ['192.168.1.1', '192.168.1.2'],
      searches: ['corp.example', 'lab.example'],
      options: ['attempts:3', 'rotate'],
    });
  });

  const cases: {
    name: string;
    spec?: any;
    settings?: Partial<ClusterDNSSettings>;
    host?: string;
    text: string;
    warnings?: string[];
  }[] = [
    {
      name: 'ClusterFirst (the API default): the cluster nameserver, cluster then host searches, ndots:5',
      text:
        'search shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\n' +
        'nameserver 10.0.0.10\noptions ndots:5\n',
    },
    {
      name: 'ClusterFirst with several cluster nameservers, a host search equal to a cluster one once',
      settings: { clusterDNS: ['10.0.0.10', '10.0.0.11'] },
      host: 'nameserver 192.168.1.1\nsearch cluster.local example.org\n',
      text:
        'search shop.svc.cluster.local svc.cluster.local cluster.local example.org\n' +
        'nameserver 10.0.0.10\nnameserver 10.0.0.11\noptions ndots:5\n',
    },
    {
      name: 'ClusterFirst without --cluster-domain: only the host searches',
      settings: { clusterDomain: '' },
      text: 'search corp.example lab.example\nnameserver 10.0.0.10\noptions ndots:5\n',
    },
    {
      name: 'ClusterFirst on the host network is Default: the host file as kubelet read it',
      spec: { hostNetwork: true },
      text:
        'search corp.example lab.example\nnameserver 192.168.1.1\nnameserver 192.168.1.2\n' +
        'options attempts:3 rotate\n',
    },
    {
      name: 'ClusterFirstWithHostNet on the host network: the cluster DNS',
      spec: { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' },
      text:
        'search shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\n' +
        'nameserver 10.0.0.10\noptions ndots:5\n',
    },
    {
      name: 'ClusterFirstWithHostNet off the host network is ClusterFirst',
      spec: { dnsPolicy: 'ClusterFirstWithHostNet' },
      settings: { clusterDomain: 'k8s.test' },
      host: '',
      text: 'search shop.svc.k8s.test svc.k8s.test k8s.test\nnameserver 10.0.0.10\noptions ndots:5\n',
    },
    {
      name: 'Default: the host file',
      spec: { dnsPolicy: 'Default' },
      text:
        'search corp.example lab.example\nnameserver 192.168.1.1\nnameserver 192.168.1.2\n' +
        'options attempts:3 rotate\n',
    },
    {
      name: 'Default of a host without resolv.conf content: containerd copies the host file',
      spec: { dnsPolicy: 'Default' },
      host: '# nothing\n',
      text: '# nothing\n',
    },
    {
      name: 'Default with --resolv-conf="": the local nameserver, search "."',
      spec: { dnsPolicy: 'Default' },
      settings: { resolvConf: '' },
      host: '',
      text: 'search .\nnameserver 127.0.0.1\n',
    },
    {
      name: 'ClusterFirst without --cluster-dns falls back to Default, with MissingClusterDNS on node and pod',
      settings: { clusterDNS: [] },
      text:
        'search corp.example lab.example\nnameserver 192.168.1.1\nnameserver 192.168.1.2\n' +
        'options attempts:3 rotate\n',
      warnings: [
        'node MissingClusterDNS kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
        'pod MissingClusterDNS pod: "web_shop(u-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
      ],
    },
    {
      name: 'None: only the dnsConfig, options with and without values',
      spec: {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['1.2.3.4'],
          searches: ['ns1.svc.cluster-domain.example', 'my.dns.search.suffix'],
          options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
        },
      },
      text:
        'search ns1.svc.cluster-domain.example my.dns.search.suffix\nnameserver 1.2.3.4\n' +
        'options ndots:2 edns0\n',
    },
    {
      name: 'dnsConfig added to ClusterFirst: servers and searches appended once, options merged by name',
      spec: {
        dnsConfig: {
          nameservers: ['10.0.0.10', '8.8.8.8'],
          searches: ['cluster.local', 'extra.example'],
          options: [{ name: 'ndots', value: '1' }, { name: 'single-request-reopen' }],
        },
      },
      text:
        'search shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example extra.example\n' +
        'nameserver 10.0.0.10\nnameserver 8.8.8.8\noptions ndots:1 single-request-reopen\n',
    },
    {
      name: 'dnsConfig added to Default: a host option replaced, the others kept',
      spec: { dnsPolicy: 'Default', dnsConfig: { options: [{ name: 'attempts', value: '5' }] } },
      text:
        'search corp.example lab.example\nnameserver 192.168.1.1\nnameserver 192.168.1.2\n' +
        'options attempts:5 rotate\n',
    },
    {
      name: 'more than 3 nameservers: the first 3, DNSConfigForming',
      spec: { dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3'] } },
      settings: { clusterDomain: '' },
      host: '',
      text: 'nameserver 10.0.0.10\nnameserver 1.1.1.1\nnameserver 2.2.2.2\noptions ndots:5\n',
      warnings: [
        'pod DNSConfigForming Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.10 1.1.1.1 2.2.2.2',
      ],
    },
    {
      name: 'more than 32 search domains: the first 32, DNSConfigForming',
      spec: {
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.2.3.4'], searches: Array.from({ length: 34 }, (_, i) => `d${i}`) },
      },
      text: `search ${Array.from({ length: 32 }, (_, i) => `d${i}`).join(' ')}\nnameserver 1.2.3.4\n`,
      warnings: [
        `pod DNSConfigForming Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${Array.from({ length: 32 }, (_, i) => `d${i}`).join(' ')}`,
      ],
    },
    {
      name: 'a search domain over 253 characters is dropped, the later ones kept',
      spec: {
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.2.3.4'], searches: ['a.example', `${'x'.repeat(254)}`, 'b.example'] },
      },
      text: 'search a.example b.example\nnameserver 1.2.3.4\n',
      warnings: [
        'pod DNSConfigForming Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a.example b.example',
      ],
    },
    {
      name: 'a search line over 2048 characters loses domains from the end',
      spec: {
        dnsPolicy: 'None',
        // 9 domains of 250 characters: 9 * 251 - 1 = 2258; 8 give 2007.
        dnsConfig: {
          nameservers: ['1.2.3.4'],
          searches: Array.from({ length: 9 }, (_, i) => `${i}${'y'.repeat(249)}`),
        },
      },
      text: `search ${Array.from({ length: 8 }, (_, i) => `${i}${'y'.repeat(249)}`).join(' ')}\nnameserver 1.2.3.4\n`,
      warnings: [
        `pod DNSConfigForming Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${Array.from({ length: 8 }, (_, i) => `${i}${'y'.repeat(249)}`).join(' ')}`,
      ],
    },
  ];

  for (const c of cases)
    it(c.name, () => {
      const host = c.host ?? HOST;
      const { config, warnings } = podResolverConfig(pod(c.spec), { ...cluster, ...c.settings }, host, [
        '127.0.0.2',
      ]);
      assert.equal(fileText(config, host), c.text);
      assert.deepEqual(
        warnings.map((w) => `${w.on} ${w.reason} ${w.message}`),
        c.warnings ?? [],
      );
    });

  it('--resolv-conf="" on an IPv6 node: ::1', () => {
    const { config } = podResolverConfig(pod({ dnsPolicy: 'Default' }), { ...cluster, resolvConf: '' }, '', [
      'fd00::2',
    ]);
    assert.deepEqual(config, { servers: ['::1'], searches: ['.'], options: [] });
  });

  it('reports a host resolv.conf that cannot give pods their search line (CheckLimitsForResolvConf)', () => {
    const path = '/etc/resolv.conf';
    const search = (n: number, len = 5) =>
      `search ${Array.from({ length: n }, (_, i) => `${i}`.padEnd(len, 'x')).join(' ')}\n`;
    assert.equal(hostResolvConfProblem(path, search(29), 'cluster.local'), undefined);
    assert.equal(
      hostResolvConfProblem(path, search(30), 'cluster.local'),
      "Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 29 domains!",
    );
    assert.equal(hostResolvConfProblem(path, search(30), ''), undefined, 'no cluster domains to add');
    assert.equal(
      hostResolvConfProblem(path, search(1, 254), ''),
      'Resolv.conf file "/etc/resolv.conf" contains a search path which length is more than allowed 253 chars!',
    );
    assert.equal(
      hostResolvConfProblem(path, search(9, 250), ''),
      "Resolv.conf file '/etc/resolv.conf' contains search line which length is more than allowed 2048 chars!",
    );
    assert.equal(hostResolvConfProblem(path, new Error('ENOENT: no such file'), ''), 'ENOENT: no such file');
  });
});
