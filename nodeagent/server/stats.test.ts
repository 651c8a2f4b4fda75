import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../shared/client/clock';
import { FakeRuntime } from '../pods/runtime-fake';
import type { Readings } from '../status/sysinfo';
import { decodeResourceMetrics, usageBetween } from '../../metrics-server/points';
import { resourceMetrics, type StatsSources } from './stats';

describe('node agent /metrics/resource', () => {
  let dir: string;
  let clock: FakeClock;
  let rt: FakeRuntime;
  let src: StatsSources;
  let readings: Readings | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-stats-'));
    clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    rt = new FakeRuntime({ clock, logRotation: { maxSizeBytes: 1 << 20, maxFiles: 2 } });
    const pod = {
      metadata: {
        uid: 'u1',
        name: 'web',
        namespace: 'ns',
        annotations: { 'tkube.io/fake-cpu': '250m', 'tkube.io/fake-memory': '64Mi' },
      },
    };
    const busy = await rt.createContainer(
      pod,
      { name: 'c', image: 'busybox' },
      'regular',
      0,
      join(dir, 'c.log'),
    );
    const waiting = await rt.createContainer(
      pod,
      { name: 'w', image: 'busybox' },
      'regular',
      0,
      join(dir, 'w.log'),
    );
    await rt.startContainer(busy.id);
    const served = {
      uid: 'u1',
      pod,
      startTime: clock.now(),
      containers: new Map([
        ['c', { current: rt.container(busy.id) }],
        ['w', { current: rt.container(waiting.id) }],
      ]),
    };
    readings = undefined;
    src = {
      nodeName: 'n1',
      machine: {} as StatsSources['machine'],
      readings: () => readings,
      pods: () => [served],
      startTime: clock.now(),
      currentVersion: '1.36',
      usage: (id) => rt.containerUsage(id),
    };
  });
  afterEach(async () => {
    await rt.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const nodeReading = (time: number, cpuSeconds: number): Readings => ({
    time,
    memory: { capacity: 8 << 30, available: 6 << 30, used: 2 << 30 },
    fs: {} as Readings['fs'],
    pids: { max: 1000, running: 10 },
    cpu: { usageCoreNanoSeconds: cpuSeconds * 1e9, usageNanoCores: 0 },
  });

  it("stamps every CPU and memory sample with the time it was read, as kubelet's collector does", async () => {
    const start = clock.now();
    readings = nodeReading(start + 500, 42);
    await clock.advance(10_000);
    const at = start + 10_000;
    const samples = resourceMetrics(src)
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(samples, [
      `container_cpu_usage_seconds_total{container="c",namespace="ns",pod="web"} 2.5 ${at}`,
      `container_memory_working_set_bytes{container="c",namespace="ns",pod="web"} 67108864 ${at}`,
      `container_start_time_seconds{container="c",namespace="ns",pod="web"} ${start / 1000}`,
      `node_cpu_usage_seconds_total 42 ${start + 500}`,
      `node_memory_working_set_bytes ${2 << 30} ${start + 500}`,
      `pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 2.5 ${at}`,
      `pod_memory_working_set_bytes{namespace="ns",pod="web"} 67108864 ${at}`,
      'resource_scrape_error 0',
    ]);
    assert.match(
      resourceMetrics(src),
      /^# HELP node_cpu_usage_seconds_total \[STABLE\] Cumulative cpu time consumed by the node in core-seconds$/m,
    );
  });

  it('leaves the node out until it has been read, rather than a zero that would make a rate', () => {
    const text = resourceMetrics(src);
    assert.doesNotMatch(text, /^node_/m);
    assert.match(
      text,
      /^container_cpu_usage_seconds_total\{container="c",namespace="ns",pod="web"\} 0 \d+$/m,
    );
  });

  it("gives metrics-server the container's own rate from two scrapes received at uneven spacing", async () => {
    // The scrapes are taken 15 s apart, but the first reaches metrics-server 0.9 s late (a loaded host):
    // the rate must follow the samples' times, not the arrivals.
    await clock.advance(5_000);
    const first = decodeResourceMetrics(resourceMetrics(src), clock.now() + 900);
    await clock.advance(15_000);
    const second = decodeResourceMetrics(resourceMetrics(src), clock.now());
    const rate = (s: typeof first) => s.containers.get('ns/web')!.get('c')!;
    const u = usageBetween(rate(first), rate(second));
    assert.deepEqual(u && { nanoCores: u.nanoCores, windowMs: u.windowMs }, {
      nanoCores: 250_000_000,
      windowMs: 15_000,
    });
  });
});
