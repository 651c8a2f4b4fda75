import { strict as assert } from 'node:assert';
import { buildRuleSet, externalEndpoints, internalEndpoints, type ServicePort } from './model';
import { fixtureOptions, fixtureServices, fixtureSlices, service, slice, ep } from './fixtures';
import { iptSepHash, iptSvcHash } from './names';

const rules = () => buildRuleSet(fixtureServices, fixtureSlices, fixtureOptions);
const port = (name: string): ServicePort => {
  const sp = rules().servicePorts.find((p) => p.name === name);
  assert.ok(sp, `service port ${name}`);
  return sp;
};
const ips = (eps: { ip: string; port: number }[]) => eps.map((e) => `${e.ip}:${e.port}`);

describe('proxy model', () => {
  it('skips headless, ExternalName and other proxies’ Services', () => {
    const names = rules().servicePorts.map((p) => p.name);
    assert.deepEqual(names, [
      'default/empty',
      'default/itp:http',
      'default/lb:https',
      'default/np:http',
      'default/sctp:assoc',
      'default/term:http',
      'default/web:http',
      'kube-system/kube-dns:dns',
    ]);
    assert.ok(!rules().clusterIPs.includes('10.96.0.90'));
  });

  it('balances over ready endpoints, on the slice port of the same name', () => {
    assert.deepEqual(ips(port('default/web:http').clusterEndpoints), ['10.244.1.5:8080', '10.244.2.7:8080']);
    assert.deepEqual(ips(port('kube-system/kube-dns:dns').clusterEndpoints), ['10.244.1.53:5353']);
    assert.equal(port('kube-system/kube-dns:dns').protocol, 'udp');
  });

  it('uses serving terminating endpoints only when no endpoint is ready', () => {
    assert.deepEqual(ips(port('default/term:http').clusterEndpoints), ['10.244.1.50:8080']);
    const mixed = buildRuleSet(
      [service('default', 'm', { clusterIP: '10.96.1.1', ports: [{ name: 'http', port: 80 }] })],
      [
        slice(
          'default',
          'm',
          [
            ep('10.244.1.1', 'node-a'),
            ep('10.244.1.2', 'node-a', { ready: false, serving: true, terminating: true }),
          ],
          [{ name: 'http', port: 80 }],
        ),
      ],
      fixtureOptions,
    );
    assert.deepEqual(ips(mixed.servicePorts[0].clusterEndpoints), ['10.244.1.1:80']);
  });

  it('applies traffic policies Local to this node’s endpoints', () => {
    const itp = port('default/itp:http');
    assert.deepEqual(internalEndpoints(itp), []);
    assert.equal(itp.clusterEndpoints.length, 1);
    const np = port('default/np:http');
    assert.deepEqual(ips(internalEndpoints(np)), ['10.244.1.30:8080', '10.244.2.30:8080']);
    assert.deepEqual(ips(externalEndpoints(np)), ['10.244.1.30:8080']);
    assert.equal(np.nodePort, 30080);
  });

  it('takes ClientIP affinity with its timeout, the LB ingress IPs and NodePorts', () => {
    assert.equal(port('kube-system/kube-dns:dns').affinitySeconds, 600);
    assert.equal(port('default/web:http').affinitySeconds, undefined);
    assert.deepEqual(port('default/lb:https').loadBalancerIPs, ['198.51.100.5']);
    // The node (192.168.50.2) is in a range: the LB IP itself is allowed as a source too.
    assert.deepEqual(port('default/lb:https').sourceRanges, [
      '203.0.113.0/24',
      '192.168.50.0/24',
      '198.51.100.5',
    ]);
    assert.deepEqual(port('default/np:http').sourceRanges, []);
    assert.equal(port('default/lb:https').nodePort, 30443);
    assert.equal(port('default/web:http').nodePort, undefined);
  });

  it('chooses NodePort addresses from --nodeport-addresses', () => {
    assert.equal(rules().nodePortIPs, 'local');
    const o = { ...fixtureOptions, nodeIPs: ['192.168.50.2', '172.16.0.1'] };
    assert.deepEqual(buildRuleSet([], [], { ...o, nodePortAddresses: ['primary'] }).nodePortIPs, [
      '172.16.0.1',
      '192.168.50.2',
    ]);
    assert.deepEqual(buildRuleSet([], [], { ...o, nodePortAddresses: ['172.16.0.0/12'] }).nodePortIPs, [
      '172.16.0.1',
    ]);
  });
});

describe('proxy chain names', () => {
  // kube-proxy's iptables test vectors (service-proxy.md §3).
  const sp = (name: string, protocol: 'tcp' | 'udp') => ({ name, protocol }) as ServicePort;
  it('hash as kube-proxy does', () => {
    assert.equal(iptSvcHash(sp('kube-system/kube-dns:dns', 'udp')), 'TCOU7JCQXEZGVUNU');
    assert.equal(iptSvcHash(sp('default/kubernetes:https', 'tcp')), 'NPX46M4PTMTKRN6Y');
    assert.equal(
      iptSepHash(sp('default/kubernetes:https', 'tcp'), { ip: '172.18.0.2', port: 6443 } as any),
      'V2PECCYPB6X2GSCW',
    );
  });
});
