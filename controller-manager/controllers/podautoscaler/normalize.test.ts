// Stabilization windows, min/max, the fixed scale-up limit and spec.behavior
// policies, on an injected clock.
import assert from 'node:assert/strict';
import { Normalizer, type Behavior, type NormalizeArgs } from './normalize';

class Clock {
  t = Date.parse('2026-01-01T00:00:00Z');
  now = () => this.t;
  advance(s: number) {
    this.t += s * 1000;
  }
}

function setup(downscaleSeconds = 300) {
  const clock = new Clock();
  const n = new Normalizer(downscaleSeconds * 1000, clock.now);
  const run = (a: Partial<NormalizeArgs> & { currentReplicas: number; desiredReplicas: number }) => {
    const r = n.normalize({ key: 'ns/h', minReplicas: 1, maxReplicas: 10, ...a });
    const limited = r.conditions.find((c) => c.type === 'ScalingLimited')!;
    const able = r.conditions.find((c) => c.type === 'AbleToScale')!;
    return { replicas: r.replicas, limited, able };
  };
  return { clock, n, run };
}

describe('podautoscaler: normalize (no behavior)', () => {
  it('holds a scale-down for the downscale stabilization window', () => {
    const { clock, n, run } = setup(300);
    n.recordInitialRecommendation('ns/h', 5);
    let r = run({ currentReplicas: 5, desiredReplicas: 2 });
    assert.equal(r.replicas, 5);
    assert.equal(r.able.reason, 'ScaleDownStabilized');
    assert.equal(
      r.able.message,
      'recent recommendations were higher than current one, applying the highest recent recommendation',
    );
    clock.advance(200);
    assert.equal(run({ currentReplicas: 5, desiredReplicas: 2 }).replicas, 5);
    clock.advance(101); // the initial 5 is now older than 300 s
    r = run({ currentReplicas: 5, desiredReplicas: 2 });
    assert.equal(r.replicas, 2);
    assert.equal(r.able.reason, 'ReadyForNewScale');
    assert.equal(r.limited.status, 'False');
    assert.equal(r.limited.reason, 'DesiredWithinRange');
  });

  it('limits a scale-up to max(2×current, 4) and to maxReplicas', () => {
    const { run } = setup();
    let r = run({ currentReplicas: 1, desiredReplicas: 9 });
    assert.equal(r.replicas, 4);
    assert.deepEqual([r.limited.status, r.limited.reason], ['True', 'ScaleUpLimit']);
    assert.equal(
      r.limited.message,
      'the desired replica count is increasing faster than the maximum scale rate',
    );
    r = run({ currentReplicas: 6, desiredReplicas: 20 });
    assert.equal(r.replicas, 10);
    assert.deepEqual([r.limited.status, r.limited.reason], ['True', 'TooManyReplicas']);
    // (a fresh HPA: the recommendations above would hold a scale-down)
    r = setup().run({ currentReplicas: 3, desiredReplicas: 0, minReplicas: 2 });
    assert.equal(r.replicas, 2);
    assert.deepEqual([r.limited.status, r.limited.reason], ['True', 'TooFewReplicas']);
  });
});

describe('podautoscaler: normalize (spec.behavior)', () => {
  it('applies the default scale-up policies: 4 pods or 100% per 15 s, whichever is more', () => {
    const { clock, n, run } = setup();
    const behavior: Behavior = { scaleUp: {}, scaleDown: {} };
    let r = run({ currentReplicas: 2, desiredReplicas: 50, maxReplicas: 100, behavior });
    assert.equal(r.replicas, 6); // max(2+4, 2×2)
    assert.equal(r.limited.reason, 'ScaleUpLimit');
    n.storeScaleEvent('ns/h', behavior, 2, 6);
    clock.advance(5);
    // Within the period the start count is still 2: no further growth.
    r = run({ currentReplicas: 6, desiredReplicas: 50, maxReplicas: 100, behavior });
    assert.equal(r.replicas, 6);
    clock.advance(11);
    r = run({ currentReplicas: 6, desiredReplicas: 50, maxReplicas: 100, behavior });
    assert.equal(r.replicas, 12); // max(6+4, 2×6)
  });

  it('scales down by a Pods policy per period, after the stabilization window', () => {
    const { clock, n, run } = setup();
    const behavior: Behavior = {
      scaleDown: {
        stabilizationWindowSeconds: 60,
        policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }],
      },
    };
    n.recordInitialRecommendation('ns/h', 5);
    assert.equal(run({ currentReplicas: 5, desiredReplicas: 1, behavior }).replicas, 5);
    clock.advance(61);
    const r = run({ currentReplicas: 5, desiredReplicas: 1, behavior });
    // The recommendation of 61 s ago (1) is outside, the initial 5 too: stabilized 1, limited to 5-1.
    assert.equal(r.replicas, 4);
    assert.deepEqual([r.limited.status, r.limited.reason], ['True', 'ScaleDownLimit']);
    assert.equal(
      r.limited.message,
      'the desired replica count is decreasing faster than the maximum scale rate',
    );
    n.storeScaleEvent('ns/h', behavior, 5, 4);
    clock.advance(10);
    assert.equal(run({ currentReplicas: 4, desiredReplicas: 1, behavior }).replicas, 4);
    clock.advance(21);
    assert.equal(run({ currentReplicas: 4, desiredReplicas: 1, behavior }).replicas, 3);
  });

  it('selectPolicy Min takes the smallest change, Disabled none', () => {
    const { run } = setup();
    const policies = [
      { type: 'Pods' as const, value: 4, periodSeconds: 60 },
      { type: 'Percent' as const, value: 50, periodSeconds: 60 },
    ];
    assert.equal(
      run({
        currentReplicas: 10,
        desiredReplicas: 40,
        maxReplicas: 100,
        behavior: { scaleUp: { selectPolicy: 'Min', policies } },
      }).replicas,
      14,
    );
    assert.equal(
      run({
        currentReplicas: 10,
        desiredReplicas: 40,
        maxReplicas: 100,
        behavior: { scaleUp: { selectPolicy: 'Max', policies } },
      }).replicas,
      15,
    );
    assert.equal(
      run({
        currentReplicas: 10,
        desiredReplicas: 40,
        maxReplicas: 100,
        behavior: { scaleUp: { selectPolicy: 'Disabled' } },
      }).replicas,
      10,
    );
  });

  it('a scale-up stabilization window takes the lowest recent recommendation', () => {
    const { clock, run } = setup();
    const behavior: Behavior = { scaleUp: { stabilizationWindowSeconds: 120 } };
    run({ currentReplicas: 2, desiredReplicas: 2, behavior });
    clock.advance(30);
    const r = run({ currentReplicas: 2, desiredReplicas: 8, behavior });
    assert.equal(r.replicas, 2);
    assert.equal(r.able.reason, 'ScaleUpStabilized');
    clock.advance(121);
    assert.equal(run({ currentReplicas: 2, desiredReplicas: 8, behavior }).replicas, 6);
  });
});
