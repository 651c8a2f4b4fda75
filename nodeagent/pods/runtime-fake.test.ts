import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../shared/client/clock';
import { FakeRuntime } from './runtime-fake';

describe('fake runtime: synthetic resource use', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-fake-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports the load the annotations ask for, CPU time growing with uptime, and nothing once exited', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const rt = new FakeRuntime({ clock, logRotation: { maxSizeBytes: 1 << 20, maxFiles: 2 } });
    const pod = {
      metadata: {
        uid: 'u1',
        name: 'p',
        namespace: 'default',
        annotations: { 'tkube.io/fake-cpu.busy': '250m', 'tkube.io/fake-memory': '64Mi' },
      },
    };
    const busy = await rt.createContainer(
      pod,
      { name: 'busy', image: 'busybox' },
      'regular',
      0,
      join(dir, 'a.log'),
    );
    const idle = await rt.createContainer(
      pod,
      { name: 'idle', image: 'busybox' },
      'regular',
      0,
      join(dir, 'b.log'),
    );
    assert.equal(rt.containerUsage(busy.id), undefined, 'nothing before it runs');
    await rt.startContainer(busy.id);
    await rt.startContainer(idle.id);
    await clock.advance(10_000);
    const u = rt.containerUsage(busy.id)!;
    assert.equal(u.cpuNanoCores, 250_000_000);
    assert.equal(u.cpuCoreNanoSeconds, 2_500_000_000, '0.25 cores for 10 s');
    assert.equal(u.memoryWorkingSetBytes, 64 * 1024 * 1024);
    const i = rt.containerUsage(idle.id)!;
    assert.equal(i.cpuNanoCores, 1_000_000, 'the default 1m');
    assert.equal(i.memoryWorkingSetBytes, 64 * 1024 * 1024, 'the pod-wide memory annotation');
    const stopped = rt.stopContainer(busy.id, 0);
    await clock.advance(1);
    await stopped;
    assert.equal(rt.containerUsage(busy.id), undefined);
    await rt.close();
  });
});
