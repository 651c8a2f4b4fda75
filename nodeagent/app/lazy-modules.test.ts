// What a node agent loads: the CRI client (grpc-js, protobufjs) and the CRI runtime only
// with --runtime remote, grpc-js for probes only on a pod's first grpc probe, the
// simulated nodes' host only with --simulated-nodes, and no general system-information
// library (the machine is read from /proc), and no undici (the client's transport is
// node:http2 and node:https, shared/client/http-transport.ts). A module list, not a time or a size.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const DIST = join(__dirname, '..', '..');

/** The modules `node dist/cmd/nodeagent.js --help` has loaded when it exits (it builds the whole agent's imports). */
function loadedByTheCommand(): string[] {
  const cmd = join(DIST, 'cmd', 'nodeagent.js');
  const script = `
    process.argv = [process.argv[0], ${JSON.stringify(cmd)}, '--help'];
    process.on('exit', () => require('node:fs').writeSync(2, '\\n@@' + JSON.stringify(Object.keys(require.cache))));
    require(${JSON.stringify(cmd)});`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const at = r.stderr.lastIndexOf('\n@@');
  assert.ok(at >= 0, `no module list: ${r.stderr.slice(0, 500)}`);
  return JSON.parse(r.stderr.slice(at + 3)) as string[];
}

describe('node agent: modules it never runs stay unloaded', function () {
  this.timeout(30_000);

  it('the node agent command loads no gRPC, Protobuf, CRI runtime, simulated host or systeminformation', () => {
    const loaded = loadedByTheCommand();
    const offending = loaded.filter((f) =>
      /node_modules[\\/](@grpc[\\/]grpc-js|protobufjs|systeminformation)[\\/]|nodeagent[\\/]cri[\\/]runtime\.js$|shared[\\/]cri[\\/]client\.js$|nodeagent[\\/]simulated[\\/]host\.js$/.test(
        f,
      ),
    );
    assert.deepEqual(offending, []);
    // The agent itself was loaded (the check above is not vacuous).
    assert.ok(loaded.some((f) => f.endsWith(join('nodeagent', 'pods', 'probe-handlers.js'))));
  });

  it('loads no undici: the client is on node:http2 and node:https', () => {
    const loaded = loadedByTheCommand();
    assert.deepEqual(
      loaded.filter((f) => /node_modules[\\/]undici[\\/]/.test(f)),
      [],
    );
    assert.ok(loaded.some((f) => f.endsWith(join('shared', 'client', 'http-transport.js'))));
  });

  it('the grpc prober loads grpc-js on its first probe', () => {
    const script = `
      const p = require(${JSON.stringify(join(DIST, 'nodeagent', 'pods', 'probe-handlers.js'))});
      const grpc = () => Object.keys(require.cache).some((f) => /node_modules[\\\\/]@grpc[\\\\/]grpc-js[\\\\/]/.test(f));
      const before = grpc();
      // A port nothing listens on (port 1 on loopback): the probe fails, having loaded grpc-js.
      p.grpcProbe({ port: 1 }, { podIP: '127.0.0.1' }, 1).then((r) =>
        console.log(JSON.stringify({ before, after: grpc(), result: r.result })),
      );`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as {
      before: boolean;
      after: boolean;
      result: string;
    };
    assert.deepEqual(out, { before: false, after: true, result: 'failure' });
  });
});
