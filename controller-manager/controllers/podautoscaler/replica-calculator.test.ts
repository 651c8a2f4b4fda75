// The HPA's replica arithmetic against Kubernetes' cases: tolerance, unready
// and missing pods, cpu initialization, AverageValue targets.
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { ReplicaCalculator, podMetricsInfo, type PodMetricsInfo } from './replica-calculator';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface PodOpts {
  phase?: string;
  ready?: boolean;
  /** ms before NOW the pod started (default 10 min: past the cpu initialization period). */
  startedAgo?: number;
  /** ms before NOW readiness last changed (default: at start). */
  transitionAgo?: number;
  request?: string;
  deleted?: boolean;
}

function pod(name: string, o: PodOpts = {}): KubeObject {
  const startedAgo = o.startedAgo ?? 10 * 60_000;
  return {
    metadata: { name, namespace: 'ns', ...(o.deleted ? { deletionTimestamp: iso(NOW) } : {}) },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: o.request ?? '1' } } }] },
    status: {
      phase: o.phase ?? 'Running',
      startTime: iso(NOW - startedAgo),
      conditions: [
        {
          type: 'Ready',
          status: o.ready === false ? 'False' : 'True',
          lastTransitionTime: iso(NOW - (o.transitionAgo ?? startedAgo)),
        },
      ],
    },
  };
}

/** Samples in milli-cores, taken a minute ago over a 30 s window. */
function samples(values: Record<string, number>): PodMetricsInfo {
  return new Map(
    Object.entries(values).map(([k, v]) => [k, { timestamp: NOW - 60_000, windowMs: 30_000, value: v }]),
  );
}

const calc = new ReplicaCalculator({
  tolerance: 0.1,
  cpuInitializationPeriodMs: 5 * 60_000,
  delayOfInitialReadinessStatusMs: 30_000,
  now: () => NOW,
});

const util = (current: number, target: number, pods: KubeObject[], m: Record<string, number>) =>
  calc.resourceReplicas(current, target, 'cpu', '', samples(m), pods, NOW);

describe('podautoscaler: replica calculator', () => {
  it('scales up by the utilization ratio of ready pods', () => {
    const r = util(3, 30, [pod('a'), pod('b'), pod('c')], { a: 300, b: 500, c: 700 });
    assert.equal(r.utilization, 50);
    assert.equal(r.rawAverage, 500);
    assert.equal(r.replicas, 5); // ceil(50/30 × 3)
  });

  it('keeps the count when the ratio is within the tolerance', () => {
    assert.equal(util(2, 50, [pod('a'), pod('b')], { a: 520, b: 540 }).replicas, 2); // 53%: ratio 1.06
    assert.equal(util(2, 50, [pod('a'), pod('b')], { a: 600, b: 600 }).replicas, 3); // 60%: ratio 1.2
  });

  it('scales down by the ratio', () => {
    assert.equal(
      util(4, 50, [pod('a'), pod('b'), pod('c'), pod('d')], { a: 100, b: 100, c: 100, d: 100 }).replicas,
      1,
    );
  });

  it('assumes unready pods at 0% on a scale-up', () => {
    const pods = [pod('a'), pod('b'), pod('c', { phase: 'Pending' })];
    // ready pods at 100% of 50% → ratio 2; with the pending pod at 0: 200/3 = 66% → ratio 1.33 → ceil(1.33×3) = 4
    const r = util(3, 50, pods, { a: 1000, b: 1000 });
    assert.equal(r.utilization, 100);
    assert.equal(r.replicas, 4);
  });

  it('ignores unready pods on a scale-down', () => {
    const pods = [pod('a'), pod('b'), pod('c', { phase: 'Pending' })];
    assert.equal(util(3, 50, pods, { a: 100, b: 100 }).replicas, 1); // ceil(0.2 × 2 ready)
  });

  it('assumes missing pods at 100% on a scale-down, and keeps the count if that turns the direction', () => {
    const pods = [pod('a'), pod('b'), pod('c'), pod('d')];
    // a,b at 20%, c,d missing → (200+200+1000+1000)/4000 = 60% vs 50%: direction flips → keep 4
    assert.equal(util(4, 50, pods, { a: 200, b: 200 }).replicas, 4);
    // a,b at 10% of a 10% target... at 25% target: missing at 100% too → 55% → ratio 2.2 flips → keep
    // with a high target, missing pods count at the target: 4 pods, two at 10%, target 200% → (100+100+2000+2000)/4000 = 105% → 0.525 → 3
    assert.equal(util(4, 200, pods, { a: 100, b: 100 }).replicas, 3);
  });

  it('assumes missing pods at 0% on a scale-up', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    // a,b at 150%: ratio 3; with c at 0 → 100% → ratio 2 → ceil(2×3) = 6
    assert.equal(util(3, 50, pods, { a: 1500, b: 1500 }).replicas, 6);
  });

  it('leaves out deleted and failed pods', () => {
    const pods = [pod('a'), pod('b', { deleted: true }), pod('c', { phase: 'Failed' })];
    assert.equal(util(3, 50, pods, { a: 1000, b: 0, c: 0 }).replicas, 2);
  });

  it('treats cpu samples of pods still in their initialization period as unready', () => {
    // Started 1 min ago, ready 20 s ago: the sample (60 s old) predates readiness + window.
    const young = pod('b', { startedAgo: 60_000, transitionAgo: 20_000 });
    const r = util(2, 50, [pod('a'), young], { a: 1000, b: 1000 });
    // b is unready → at 0 on the scale-up: (1000+0)/2000 = 50% → ratio 1 → keep 2
    assert.equal(r.replicas, 2);
    // memory samples are not held back by the cpu initialization period
    const mem = calc.resourceReplicas(
      2,
      50,
      'memory',
      '',
      samples({ a: 1000, b: 1000 }),
      [
        { ...pod('a'), spec: { containers: [{ name: 'c', resources: { requests: { memory: '1' } } }] } },
        { ...young, spec: { containers: [{ name: 'c', resources: { requests: { memory: '1' } } }] } },
      ],
      NOW,
    );
    assert.equal(mem.replicas, 4);
  });

  it('treats a pod that never became ready after its start as unready past the initialization period', () => {
    const never = pod('b', { ready: false, startedAgo: 10 * 60_000, transitionAgo: 10 * 60_000 - 10_000 });
    assert.equal(util(2, 50, [pod('a'), never], { a: 1000, b: 1000 }).replicas, 2);
    // one that was ready once and went unready later counts
    const flapped = pod('b', { ready: false, startedAgo: 10 * 60_000, transitionAgo: 60_000 });
    assert.equal(util(2, 50, [pod('a'), flapped], { a: 1000, b: 1000 }).replicas, 4);
  });

  it('fails with Kubernetes messages', () => {
    assert.throws(
      () => util(1, 50, [], { a: 1 }),
      /^Error: no pods returned by selector while calculating replica count$/,
    );
    assert.throws(
      () => util(1, 50, [pod('a', { phase: 'Pending' })], { a: 1 }),
      /did not receive metrics for targeted pods \(pods might be unready\)/,
    );
    const noRequest = { ...pod('a'), spec: { containers: [{ name: 'c' }] } };
    assert.throws(
      () => util(1, 50, [noRequest], { a: 1 }),
      /^Error: missing request for cpu in container c of Pod a$/,
    );
  });

  it('computes AverageValue targets from the plain usage', () => {
    const r = calc.rawResourceReplicas(2, 100, 'cpu', samples({ a: 300, b: 300 }), [pod('a'), pod('b')], NOW);
    assert.equal(r.rawAverage, 300);
    assert.equal(r.replicas, 6);
    assert.equal(
      calc.rawResourceReplicas(2, 290, 'cpu', samples({ a: 300, b: 300 }), [pod('a'), pod('b')], NOW)
        .replicas,
      2,
    );
  });

  it('reads PodMetrics: pod sums, pods missing a container value left out, single containers', () => {
    const items = [
      {
        metadata: { name: 'a', namespace: 'ns' },
        timestamp: iso(NOW),
        window: '30s',
        containers: [
          { name: 'x', usage: { cpu: '100m', memory: '1Mi' } },
          { name: 'y', usage: { cpu: '250000n', memory: '1Mi' } },
        ],
      },
      {
        metadata: { name: 'b', namespace: 'ns' },
        timestamp: iso(NOW),
        window: '30s',
        containers: [{ name: 'x', usage: { memory: '1Mi' } }],
      },
    ] as KubeObject[];
    const m = podMetricsInfo(items, 'cpu', '');
    assert.deepEqual([...m.keys()], ['a']);
    assert.equal(m.get('a')!.value, 101);
    assert.equal(m.get('a')!.windowMs, 30_000);
    assert.equal(podMetricsInfo(items, 'cpu', 'y').get('a')!.value, 1);
    assert.throws(
      () => podMetricsInfo(items, 'cpu', 'x'),
      /failed to get resource cpu for container x in pod ns\/b/,
    );
  });

  it('takes spec.behavior tolerances per direction', () => {
    const pods = [pod('a'), pod('b')];
    const hpa = {
      metadata: {},
      spec: { behavior: { scaleUp: { tolerance: '0.5' }, scaleDown: { tolerance: '0' } } },
    };
    const c = calc.forHPA(hpa as KubeObject);
    // 60% of a 50% target: ratio 1.2 — beyond the flag's 0.1, within the HPA's 0.5 up
    assert.equal(calc.resourceReplicas(2, 50, 'cpu', '', samples({ a: 600, b: 600 }), pods, NOW).replicas, 3);
    assert.equal(c.resourceReplicas(2, 50, 'cpu', '', samples({ a: 600, b: 600 }), pods, NOW).replicas, 2);
    // 47.5%: ratio 0.95 — within the flag's tolerance, not within a scale-down tolerance of 0
    const four = [pod('a'), pod('b'), pod('c'), pod('d')];
    const m = { a: 475, b: 475, c: 475, d: 475 };
    assert.equal(calc.resourceReplicas(4, 50, 'cpu', '', samples(m), four, NOW).replicas, 4);
    assert.equal(c.resourceReplicas(4, 50, 'cpu', '', samples(m), four, NOW).replicas, 4); // ceil(0.94 × 4)
    assert.equal(
      c.resourceReplicas(
        20,
        50,
        'cpu',
        '',
        samples(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, 475]))),
        Array.from({ length: 20 }, (_, i) => pod(`p${i}`)),
        NOW,
      ).replicas,
      19,
    );
  });

  it('uses pod-level requests when set, and a named container otherwise', () => {
    const p = {
      ...pod('a'),
      spec: {
        resources: { requests: { cpu: '2' } },
        containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
      },
    };
    assert.equal(util(1, 50, [p], { a: 1000 }).utilization, 50);
    assert.equal(calc.resourceReplicas(1, 50, 'cpu', 'c', samples({ a: 1000 }), [p], NOW).utilization, 100);
    assert.throws(
      () => calc.resourceReplicas(1, 50, 'cpu', 'x', samples({ a: 1000 }), [p], NOW),
      /^Error: container x not found in Pod a$/,
    );
    assert.throws(
      () => calc.resourceReplicas(1, 50, 'memory', '', samples({ a: 1000 }), [p], NOW),
      /^Error: missing pod-level request for memory in Pod a$/,
    );
  });

  it('computes External targets: total value over ready pods, or per pod', () => {
    const pods = [pod('a'), pod('b'), pod('c', { ready: false })];
    assert.equal(calc.usageRatioReplicas(3, 3, pods), 6); // ratio 3 × 2 ready pods
    assert.equal(calc.usageRatioReplicas(3, 1.05, pods), 3);
    assert.equal(calc.usageRatioReplicas(0, 2.5, []), 3);
    assert.deepEqual(calc.externalPerPodReplicas(2, 1000, 5000), { replicas: 5, usage: 2500 });
    assert.deepEqual(calc.externalPerPodReplicas(5, 1000, 5200), { replicas: 5, usage: 1040 });
  });
});
