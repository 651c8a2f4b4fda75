// Graceful shutdown of the apiserver process (SPEC.md Limits): on SIGTERM
// /readyz fails at once while /healthz and /livez keep passing for
// --shutdown-delay-duration, then the process drains and exits.
import assert from 'node:assert/strict';
import { getWithKubeconfig } from '../shared/cluster/process';
import { startAPIServerProcess } from './support/processes';
import { kubectl, kubectlAvailable } from './support/kubectl';

describe('apiserver graceful shutdown', function () {
  this.timeout(60_000);

  it('fails /readyz at once on SIGTERM, keeps /livez and /healthz during the delay, then exits 0', async () => {
    const srv = await startAPIServerProcess({ args: ['--shutdown-delay-duration=3s'] });
    try {
      assert.equal((await getWithKubeconfig(srv.kubeconfig, '/readyz')).status, 200);
      const t0 = Date.now();
      srv.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      const ready = await getWithKubeconfig(srv.kubeconfig, '/readyz?verbose');
      assert.equal(ready.status, 500);
      assert.match(ready.body, /\[-\]shutdown failed/);
      assert.equal((await getWithKubeconfig(srv.kubeconfig, '/livez')).status, 200);
      assert.equal((await getWithKubeconfig(srv.kubeconfig, '/healthz')).status, 200);
      assert.equal(
        (await getWithKubeconfig(srv.kubeconfig, '/api/v1/namespaces')).status,
        200,
        'requests are still served',
      );
      const code = await srv.exited;
      assert.equal(code, 0);
      assert.ok(Date.now() - t0 >= 2500, 'the process waited for the delay');
    } finally {
      await srv.cleanup();
    }
  });

  it('shows request counters rising through kubectl get --raw /metrics', async function () {
    if (!kubectlAvailable()) this.skip();
    const srv = await startAPIServerProcess();
    try {
      const count = async () => {
        const r = await kubectl(srv.kubeconfig, ['get', '--raw', '/metrics']);
        assert.equal(r.code, 0, r.stderr);
        const m =
          /^apiserver_request_total\{verb="LIST",[^}]*resource="namespaces"[^}]*code="200"\} (\d+)$/m.exec(
            r.stdout,
          );
        return m ? Number(m[1]) : 0;
      };
      const before = await count();
      for (let i = 0; i < 3; i++) await kubectl(srv.kubeconfig, ['get', 'namespaces']);
      assert.ok((await count()) >= before + 3);
    } finally {
      await srv.cleanup();
    }
  });
});
