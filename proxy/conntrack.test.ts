import { strict as assert } from 'node:assert';
import { conntrackArgs, staleUdpFlows } from './conntrack';
import { buildRuleSet } from './model';
import { ep, fixtureOptions, service, slice } from './fixtures';

const dns = (ips: string[], type = 'ClusterIP') =>
  buildRuleSet(
    [
      service('kube-system', 'dns', {
        type,
        clusterIP: '10.96.0.53',
        externalIPs: ['192.0.2.53'],
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 },
          { name: 'tcp', port: 53, protocol: 'TCP', nodePort: 30054 },
        ],
      }),
    ],
    [
      slice(
        'kube-system',
        'dns',
        ips.map((ip) => ep(ip, 'node-a')),
        [
          { name: 'dns', port: 5353, protocol: 'UDP' },
          { name: 'tcp', port: 5353, protocol: 'TCP' },
        ],
      ),
    ],
    fixtureOptions,
  );

describe('proxy UDP conntrack cleanup', () => {
  it('deletes the flows of UDP endpoints that stopped serving, on every service address and the NodePort', () => {
    const flows = staleUdpFlows(
      dns(['10.244.1.7', '10.244.1.8'], 'NodePort'),
      dns(['10.244.1.8'], 'NodePort'),
    );
    assert.deepEqual(
      flows.map(conntrackArgs).map((a) => a.join(' ')),
      [
        '-D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.7 --reply-port-src 5353',
        '-D -p udp --orig-dst 192.0.2.53 --orig-port-dst 53 --reply-src 10.244.1.7 --reply-port-src 5353',
        '-D -p udp --orig-port-dst 30053 --reply-src 10.244.1.7 --reply-port-src 5353',
      ],
    );
  });

  it('leaves flows alone while the endpoints stay, and on the first sync', () => {
    assert.deepEqual(staleUdpFlows(dns(['10.244.1.7']), dns(['10.244.1.7'])), []);
    assert.deepEqual(staleUdpFlows(undefined, dns(['10.244.1.7'])), []);
    // The Service deleted: its endpoints' flows go too.
    assert.equal(staleUdpFlows(dns(['10.244.1.7']), buildRuleSet([], [], fixtureOptions)).length, 2);
  });
});
