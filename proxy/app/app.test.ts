// The proxy process: health, metrics and mode through its own servers (in this
// process, programming a network namespace), and the executable's --cleanup and
// flag errors (run inside a namespace).
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { DIST } from '../../shared/cluster/process';
import { defaultFlagValues } from '../../shared/options/defaults';
import { Netns, commandAvailable, netnsAvailable, removeStaleNamespaces } from '../netns-testing';
import { proxyFlags } from './options';
import { resolveConfig, startProxy, type RunningProxy } from './server';

function runProxyIn(ns: Netns, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'ip',
      ['netns', 'exec', ns.name, process.execPath, join(DIST, 'cmd', 'proxy.js'), ...args],
      (err, _out, stderr) => resolve({ code: err ? ((err as any).code ?? 1) : 0, stderr }),
    );
  });
}

describe('proxy app', function () {
  this.timeout(60_000);
  let ns: Netns;
  before(function () {
    if (!netnsAvailable() || !commandAvailable('nft') || !commandAvailable('iptables-restore')) this.skip();
    removeStaleNamespaces();
    ns = Netns.create('app');
  });
  after(() => ns?.delete());

  describe('servers', () => {
    let api: TestAPIServer;
    let proxy: RunningProxy | undefined;
    before(async () => {
      api = await startTestAPIServer();
    });
    after(async () => {
      await proxy?.stop();
      await api?.stop();
    });

    it('serves /healthz, /livez, /metrics and /proxyMode as kube-proxy does', async () => {
      const cfg = resolveConfig(
        defaultFlagValues(proxyFlags, {
          kubeconfig: api.kubeconfig,
          hostnameOverride: 'Node-A',
          healthzBindAddress: '127.0.0.1:0',
          metricsBindAddress: '127.0.0.1:0',
          nftablesTable: 'tkube-proxy-app',
        }),
      );
      assert.equal(cfg.nodeName, 'node-a');
      proxy = await startProxy(cfg, ns.runner());
      assert.match(ns.sh('nft', 'list', 'tables'), /table ip tkube-proxy-app/);

      const get = async (port: number, path: string) => {
        const r = await request(`http://127.0.0.1:${port}${path}`);
        return { status: r.statusCode, type: String(r.headers['content-type']), body: await r.body.text() };
      };
      const healthz = await get(proxy.healthPort!, '/healthz');
      assert.equal(healthz.status, 200);
      assert.equal(healthz.type, 'application/json');
      const h = JSON.parse(healthz.body);
      assert.ok(Date.parse(h.lastUpdated) > 0 && Date.parse(h.currentTime) >= Date.parse(h.lastUpdated));
      assert.equal(h.nodeEligible, true);
      const livez = JSON.parse((await get(proxy.healthPort!, '/livez')).body);
      assert.equal(livez.nodeEligible, undefined, '/livez ignores node eligibility');
      assert.equal((await get(proxy.healthPort!, '/nope')).status, 404);

      const metrics = (await get(proxy.metricsPort!, '/metrics')).body;
      assert.match(metrics, /^kubeproxy_sync_proxy_rules_duration_seconds_count [1-9]/m);
      assert.match(metrics, /^kubeproxy_sync_proxy_rules_last_timestamp_seconds \d/m);
      assert.match(metrics, /^kubeproxy_proxy_healthz_total\{code="200"\} 1$/m);
      assert.equal((await get(proxy.metricsPort!, '/proxyMode')).body, 'nftables');

      // A change queued and never applied for longer than 2 x --sync-period: unhealthy.
      proxy.proxier.queuedAt = Date.now() - 2 * cfg.syncPeriodMs - 1;
      assert.equal((await get(proxy.healthPort!, '/healthz')).status, 503);
      proxy.proxier.queuedAt = undefined;
    });
  });

  describe('executable', () => {
    it('--cleanup removes the nftables table and the iptables chains and jumps, and exits 0', async () => {
      ns.sh('nft', 'add', 'table', 'ip', 'tkube-proxy-gone');
      ns.sh('iptables', '-t', 'nat', '-N', 'TKUBE-SERVICES');
      ns.sh(
        'iptables',
        '-t',
        'nat',
        '-I',
        'OUTPUT',
        '-m',
        'comment',
        '--comment',
        'tkube service portals',
        '-j',
        'TKUBE-SERVICES',
      );
      const r = await runProxyIn(ns, ['--cleanup', '--nftables-table', 'tkube-proxy-gone']);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(ns.sh('nft', 'list', 'tables'), /tkube-proxy-gone/);
      assert.doesNotMatch(ns.sh('iptables-save', '-t', 'nat'), /TKUBE/);
    });

    it('refuses bad flags with an error and exit 1', async () => {
      const r = await runProxyIn(ns, ['--proxy-mode', 'ipvs', '--cleanup']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Error: --proxy-mode: unknown proxy mode "ipvs"/);
      const c = await runProxyIn(ns, ['--cluster-cidr', '10.244.0.0/33', '--cleanup']);
      assert.match(c.stderr, /invalid CIDR address: 10.244.0.0\/33/);
    });
  });
});
