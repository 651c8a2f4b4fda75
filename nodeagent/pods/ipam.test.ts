import assert from 'node:assert/strict';
import { formatIP, parseCIDR, PodIPAllocator } from './ipam';

describe('nodeagent/pods: pod IP allocation', () => {
  it('hands out addresses after the gateway, one per pod, and takes them back', () => {
    const a = new PodIPAllocator('10.244.1.0/24');
    assert.equal(a.gateway(), '10.244.1.1');
    assert.equal(a.size, 253);
    assert.equal(a.allocate('p1'), '10.244.1.2');
    assert.equal(a.allocate('p2'), '10.244.1.3');
    assert.equal(a.allocate('p1'), '10.244.1.2', 'the same pod keeps its address');
    a.release('p1');
    assert.equal(a.addressOf('p1'), undefined);
    assert.equal(a.allocated, 1);
  });

  it('reserves known addresses (after a restart) and runs out like host-local', () => {
    const a = new PodIPAllocator('192.168.0.0/29');
    assert.equal(a.size, 5);
    assert.equal(a.reserve('old', '192.168.0.4'), true);
    assert.equal(a.reserve('other', '192.168.0.4'), false, 'taken by another pod');
    assert.equal(a.reserve('x', '10.0.0.1'), false, 'outside the range');
    const got = ['a', 'b', 'c', 'd'].map((p) => a.allocate(p));
    assert.deepEqual(got, ['192.168.0.2', '192.168.0.3', '192.168.0.5', '192.168.0.6']);
    assert.throws(() => a.allocate('e'), /no IP addresses available in range set: 192.168.0.2-192.168.0.6/);
  });

  it('handles IPv6 ranges', () => {
    const c = parseCIDR('fd00:10:244::/64');
    assert.equal(c.family, 6);
    assert.equal(formatIP(c.base, 6), 'fd00:10:244::');
    const a = new PodIPAllocator('fd00:10:244::/64');
    assert.equal(a.allocate('p'), 'fd00:10:244::2');
    assert.throws(() => parseCIDR('10.0.0.0/33'), /invalid CIDR address/);
    assert.throws(() => new PodIPAllocator('10.0.0.0/31'), /too small/);
  });
});
