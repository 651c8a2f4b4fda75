// The pod's managed /etc/hosts, written to a real file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureHostsFile, hostsFileContent, podHostnameAndDomain } from './etc-hosts';

describe('nodeagent/pods: /etc/hosts', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-hosts-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const pod = (spec: any = {}) => ({ metadata: { name: 'web-0', namespace: 'shop' }, spec });

  it('names the pod, with its FQDN under a subdomain, and adds hostAliases', () => {
    assert.equal(
      hostsFileContent(
        pod({
          hostname: 'db',
          subdomain: 'dbs',
          hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo', 'bar'] }],
        }),
        ['10.244.0.7'],
        'cluster.local',
      ),
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' +
        'fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n' +
        '10.244.0.7\tdb.dbs.shop.svc.cluster.local\tdb\n\n# Entries added by HostAliases.\n10.1.2.3\tfoo\tbar\n',
    );
    assert.match(hostsFileContent(pod(), ['10.244.0.8']), /\n10\.244\.0\.8\tweb-0\n$/);
    assert.deepEqual(
      podHostnameAndDomain({ metadata: { name: `${'a'.repeat(62)}-b` }, spec: {} }, undefined),
      ['a'.repeat(62), ''],
    );
  });

  it("copies the node's hosts file for host-network pods and writes the file once", () => {
    const nodeHosts = join(dir, 'node-hosts');
    writeFileSync(nodeHosts, '127.0.0.1\tlocalhost\n192.168.1.5\tnode-a\n');
    const path = join(dir, 'pod', 'etc-hosts');
    ensureHostsFile(path, pod({ hostNetwork: true }), ['192.168.1.5'], undefined, nodeHosts);
    assert.equal(
      readFileSync(path, 'utf8'),
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n192.168.1.5\tnode-a\n',
    );
    writeFileSync(nodeHosts, 'changed\n');
    ensureHostsFile(path, pod({ hostNetwork: true }), ['192.168.1.5'], undefined, nodeHosts);
    assert.match(readFileSync(path, 'utf8'), /node-a/, 'an existing file is left alone');
  });
});
