// The node status loop against a real apiserver: what a user advertises in the
// Node's status survives the agent's updates and becomes allocatable.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../../shared/client';
import { waitUntil } from '../../shared/cluster/process';
import { FakeRecorder } from '../../shared/events';
import { defaultFlagValues } from '../../shared/options/defaults';
import { resolveConfig } from '../app/config';
import { nodeagentFlags } from '../app/options';
import { NodeStatusManager } from './node-status';
import type { Readings } from './sysinfo';

const GI = 1024 ** 3;
const DONGLE = 'example.com/dongle';

describe('nodeagent/status: the status loop against an apiserver', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  let dir: string;
  let mgr: NodeStatusManager;

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1, http2: false });
    dir = mkdtempSync(join(tmpdir(), 'tkube-node-status-'));
    const values = defaultFlagValues(nodeagentFlags, {
      kubeconfig: srv.kubeconfig,
      hostnameOverride: 'n1',
      nodeIp: ['127.0.0.1'],
      rootDir: dir,
    });
    const readings: Readings = {
      time: Date.now(),
      memory: { capacity: 8 * GI, available: 6 * GI, used: 2 * GI },
      fs: { device: '/dev/x', mountpoint: '/', capacity: 100 * GI, available: 80 * GI, used: 20 * GI },
      pids: { max: 4096, running: 100 },
      cpu: { usageCoreNanoSeconds: 0, usageNanoCores: 0 },
    };
    mgr = new NodeStatusManager({
      client,
      config: resolveConfig(values, { explicit: () => true }),
      machine: {
        cores: 4,
        memoryCapacity: 8 * GI,
        kernelVersion: '6.1.0',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        operatingSystem: 'linux',
        architecture: 'amd64',
        machineID: 'm',
        systemUUID: 'u',
        bootID: 'b',
        cpuModel: 'x',
      },
      nodeIPs: ['127.0.0.1'],
      runtimeVersion: 'fake://0.1.0',
      read: async () => readings,
      images: () => [],
      recorder: new FakeRecorder(),
    });
    assert.ok(await mgr.tryRegister());
  });

  after(async () => {
    await client?.close();
    await srv?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const node = () => client.resource('nodes').get('n1');
  /** A user's JSON patch of the status, once the watch cache the agent reads from has it. */
  const patchCapacity = async (ops: unknown[]) => {
    const { metadata } = await client.resource('nodes').patch('n1', ops, 'json', { subresource: 'status' });
    await waitUntil(
      async () =>
        Number(
          (await client.resource('nodes').get('n1', { resourceVersion: '0' })).metadata.resourceVersion,
        ) >= Number(metadata.resourceVersion),
      20_000,
      'the patch in the watch cache',
    );
  };

  it('keeps an extended resource a user advertises in capacity and makes it allocatable, until it is withdrawn', async () => {
    // As Kubernetes documents advertising one: a JSON patch of the Node's status.
    await patchCapacity([{ op: 'add', path: '/status/capacity/example.com~1dongle', value: '4' }]);
    await mgr.sync();
    let n: any = await node();
    assert.equal(n.status.capacity[DONGLE], '4');
    assert.equal(n.status.allocatable[DONGLE], '4');
    assert.equal(n.status.allocatable.pods, '110');
    // The next update sees nothing to change.
    assert.equal(await mgr.sync(), false);

    await patchCapacity([{ op: 'remove', path: '/status/capacity/example.com~1dongle' }]);
    await mgr.sync();
    n = await node();
    assert.equal(n.status.capacity[DONGLE], undefined);
    assert.equal(n.status.allocatable[DONGLE], undefined);
    assert.equal(n.status.allocatable.cpu, '4');
  });
});
