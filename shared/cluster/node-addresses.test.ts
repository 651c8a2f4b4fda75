// Addresses of a CIDR as kubeadm indexes them.
import assert from 'node:assert/strict';
import { clusterDNSIP } from './cluster-dns';
import { indexedIP, podCIDRGateway } from './node-addresses';

describe('shared/cluster: indexed addresses of a CIDR', () => {
  it("gives kubeadm's kube-dns address (.10) and the bridge gateway (.1), from any address of the range", () => {
    assert.equal(clusterDNSIP('10.96.0.0/12'), '10.96.0.10');
    assert.equal(clusterDNSIP('10.0.0.0/24'), '10.0.0.10');
    assert.equal(clusterDNSIP('10.43.0.0/16,fd00::/108'), '10.43.0.10');
    assert.equal(indexedIP('10.96.5.7/12', 10), '10.96.0.10');
    assert.equal(indexedIP('10.0.0.0/24', 255), '10.0.0.255');
    assert.equal(podCIDRGateway('10.244.3.0/24'), '10.244.3.1');
  });
});
