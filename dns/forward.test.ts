// Where names outside the cluster go: --upstream and the host's resolv.conf.
// (No query is forwarded here: nothing may leave the machine in tests.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUpstreams, resolvConfNameservers } from './forward';

describe('dns: upstreams', () => {
  it('reads the nameservers of a resolv.conf, skipping comments and other lines', () => {
    const text =
      '# generated\nsearch example.test\nnameserver 127.0.0.53\nnameserver fe80::1%eth0\noptions ndots:2\nnameserver bogus\n';
    assert.deepEqual(resolvConfNameservers(text), [
      { host: '127.0.0.53', port: 53 },
      { host: 'fe80::1', port: 53 },
    ]);
  });

  it('takes "none", resolv.conf paths and ip[:port] addresses, and refuses a name', () => {
    assert.deepEqual(parseUpstreams(['none']), []);
    const dir = mkdtempSync(join(tmpdir(), 'tkube-dns-'));
    try {
      writeFileSync(join(dir, 'resolv.conf'), 'nameserver 127.0.0.2\n');
      assert.deepEqual(parseUpstreams([join(dir, 'resolv.conf'), '127.0.0.3:5353', '[::1]:53', '::1']), [
        { host: '127.0.0.2', port: 53 },
        { host: '127.0.0.3', port: 5353 },
        { host: '::1', port: 53 },
        { host: '::1', port: 53 },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.throws(() => parseUpstreams(['dns.example']), /invalid upstream "dns.example"/);
  });
});
