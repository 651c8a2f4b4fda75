// The controller manager in the apiserver's process (--run-controller-manager, the envtest
// asset) is off the path to ready: none of its modules is loaded while the server starts
// and answers health probes; it starts with the first client request and then runs the
// controllers (here the service-account controller's "default" ServiceAccount).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../shared/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { startAPIServerProcess, tempDir, type APIServerProc } from './support/processes';

/** A --require script that notes, when it happens, the first load of the controller manager. */
function watchForTheManager(dir: string): { preload: string; loaded: () => boolean } {
  const marker = join(dir, 'manager-loaded');
  const preload = join(dir, 'watch-manager.js');
  writeFileSync(
    preload,
    `const Module = require('node:module');
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  if (/controller-manager[\\\\/]app[\\\\/]manager\\.js$/.test(filename))
    require('node:fs').writeFileSync(${JSON.stringify(marker)}, filename);
  return compile.call(this, content, filename);
};
`,
  );
  return { preload, loaded: () => existsSync(marker) };
}

describe('apiserver: the in-process controller manager starts after ready', function () {
  this.timeout(60_000);
  let dir: string;
  let api: APIServerProc | undefined;
  let client: Client | undefined;

  before(() => (dir = tempDir('embedded-cm')));
  after(async () => {
    await client?.close();
    await api?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads nothing of it before the first client request, then runs the controllers', async () => {
    const watch = watchForTheManager(dir);
    // Ready: every post-start hook has run and /readyz answers 200 (health probes only so far).
    api = await startAPIServerProcess({
      dir: join(dir, 'apiserver'),
      args: ['--run-controller-manager', '--disable-admission-plugins=ServiceAccount'],
      env: { NODE_OPTIONS: `--require=${watch.preload}` },
    });
    assert.equal(watch.loaded(), false, 'the controller manager was loaded before any client request');

    client = Client.create(loadKubeconfig(api.kubeconfig));
    assert.ok((await client.resource('namespaces').get('default')).metadata?.uid);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const sa = await client
        .resource('serviceaccounts')
        .namespace('default')
        .get('default')
        .catch(() => undefined);
      if (sa) break;
      if (Date.now() > deadline)
        throw new Error(`no default ServiceAccount: ${readFileSync(api.logFile, 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(watch.loaded(), true);
  });
});
