// From the metrics' recommendation to the replicas the HPA sets (kube's
// normalizeDesiredReplicas[WithBehaviors]): recent recommendations stabilize
// it (the highest of the downscale window, the lowest of the upscale window),
// then min/maxReplicas and the rate limits apply — without spec.behavior the
// fixed limit max(2×current, 4); with it the scaleUp/scaleDown policies
// (Pods/Percent per periodSeconds, selectPolicy Max/Min/Disabled) counted
// against the scale events of the last period. Each step sets the AbleToScale
// and ScalingLimited conditions with Kubernetes' reasons.

export interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: ScalingPolicy[];
}

export interface Behavior {
  scaleUp?: ScalingRules;
  scaleDown?: ScalingRules;
}

export interface ConditionUpdate {
  type: 'AbleToScale' | 'ScalingLimited';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

interface Recommendation {
  replicas: number;
  at: number;
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/** kube's GenerateHPAScaleUpRules / ScaleDownRules: the defaults behind an absent or partial spec.behavior. */
export function withDefaults(rules: ScalingRules | undefined, up: boolean): Required<ScalingRules> {
  const dflt: Required<ScalingRules> = up
    ? {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      }
    : {
        stabilizationWindowSeconds: -1, // filled from --horizontal-pod-autoscaler-downscale-stabilization
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
      };
  return {
    stabilizationWindowSeconds: rules?.stabilizationWindowSeconds ?? dflt.stabilizationWindowSeconds,
    selectPolicy: rules?.selectPolicy ?? dflt.selectPolicy,
    policies: rules?.policies?.length ? rules.policies : dflt.policies,
  };
}

const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;

export interface NormalizeArgs {
  key: string;
  behavior?: Behavior;
  minReplicas: number;
  maxReplicas: number;
  currentReplicas: number;
  desiredReplicas: number;
}

/** The per-HPA memory of recommendations and scale events (lost on restart, as in kube). */
export class Normalizer {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleUpEvents = new Map<string, ScaleEvent[]>();
  private readonly scaleDownEvents = new Map<string, ScaleEvent[]>();

  constructor(
    private readonly downscaleStabilizationMs: number,
    private readonly now: () => number,
  ) {}

  forget(key: string): void {
    this.recommendations.delete(key);
    this.scaleUpEvents.delete(key);
    this.scaleDownEvents.delete(key);
  }

  /** The current size counts as a first recommendation, so a fresh HPA does not scale down at once. */
  recordInitialRecommendation(key: string, currentReplicas: number): void {
    if (!this.recommendations.has(key))
      this.recommendations.set(key, [{ replicas: currentReplicas, at: this.now() }]);
  }

  normalize(a: NormalizeArgs): { replicas: number; conditions: ConditionUpdate[] } {
    return a.behavior ? this.withBehaviors(a, a.behavior) : this.withoutBehaviors(a);
  }

  private record(key: string, replicas: number, isOld: (r: Recommendation) => boolean): void {
    const recs = this.recommendations.get(key) ?? [];
    const entry = { replicas, at: this.now() };
    let old = -1;
    recs.forEach((r, i) => {
      if (isOld(r)) old = i;
    });
    if (old >= 0) recs[old] = entry;
    else recs.push(entry);
    this.recommendations.set(key, recs);
  }

  private withoutBehaviors(a: NormalizeArgs): { replicas: number; conditions: ConditionUpdate[] } {
    const cutoff = this.now() - this.downscaleStabilizationMs;
    let stabilized = a.desiredReplicas;
    for (const r of this.recommendations.get(a.key) ?? [])
      if (r.at >= cutoff && r.replicas > stabilized) stabilized = r.replicas;
    this.record(a.key, a.desiredReplicas, (r) => r.at < cutoff);
    const conditions: ConditionUpdate[] = [
      stabilized !== a.desiredReplicas
        ? able('ScaleDownStabilized', HIGHER_MESSAGE)
        : able('ReadyForNewScale', 'recommended size matches current size'),
    ];
    const scaleUpLimit = Math.max(SCALE_UP_LIMIT_FACTOR * a.currentReplicas, SCALE_UP_LIMIT_MINIMUM);
    let max = a.maxReplicas;
    let limit = limited(
      'TooManyReplicas',
      'the desired replica count is more than the maximum replica count',
    );
    if (a.maxReplicas > scaleUpLimit) {
      max = scaleUpLimit;
      limit = limited(
        'ScaleUpLimit',
        'the desired replica count is increasing faster than the maximum scale rate',
      );
    }
    let replicas = stabilized;
    if (stabilized < a.minReplicas) {
      replicas = a.minReplicas;
      limit = limited('TooFewReplicas', 'the desired replica count is less than the minimum replica count');
    } else if (stabilized > max) replicas = max;
    else limit = limited('DesiredWithinRange', 'the desired count is within the acceptable range');
    conditions.push({ ...limit, status: replicas === stabilized ? 'False' : 'True' });
    return { replicas, conditions };
  }

  private withBehaviors(a: NormalizeArgs, b: Behavior): { replicas: number; conditions: ConditionUpdate[] } {
    const up = withDefaults(b.scaleUp, true);
    const down = withDefaults(b.scaleDown, false);
    if (down.stabilizationWindowSeconds < 0)
      down.stabilizationWindowSeconds = Math.trunc(this.downscaleStabilizationMs / 1000);
    const now = this.now();
    const upCutoff = now - up.stabilizationWindowSeconds * 1000;
    const downCutoff = now - down.stabilizationWindowSeconds * 1000;
    let upRec = a.desiredReplicas;
    let downRec = a.desiredReplicas;
    for (const r of this.recommendations.get(a.key) ?? []) {
      if (r.at > upCutoff) upRec = Math.min(upRec, r.replicas);
      if (r.at > downCutoff) downRec = Math.max(downRec, r.replicas);
    }
    let stabilized = Math.min(Math.max(a.currentReplicas, upRec), downRec);
    this.record(a.key, a.desiredReplicas, (r) => r.at < upCutoff && r.at < downCutoff);
    const conditions: ConditionUpdate[] = [];
    if (stabilized !== a.desiredReplicas)
      conditions.push(
        a.desiredReplicas >= a.currentReplicas
          ? able(
              'ScaleUpStabilized',
              'recent recommendations were lower than current one, applying the lowest recent recommendation',
            )
          : able('ScaleDownStabilized', HIGHER_MESSAGE),
      );
    else conditions.push(able('ReadyForNewScale', 'recommended size matches current size'));

    let replicas = stabilized;
    let limit = limited('DesiredWithinRange', 'the desired count is within the acceptable range');
    const ups = this.scaleUpEvents.get(a.key) ?? [];
    const downs = this.scaleDownEvents.get(a.key) ?? [];
    if (stabilized > a.currentReplicas) {
      const rateLimit = Math.max(a.currentReplicas, this.scaleUpLimit(a.currentReplicas, ups, downs, up));
      let max = a.maxReplicas;
      let l = limited('TooManyReplicas', 'the desired replica count is more than the maximum replica count');
      if (max > rateLimit) {
        max = rateLimit;
        l = limited(
          'ScaleUpLimit',
          'the desired replica count is increasing faster than the maximum scale rate',
        );
      }
      if (stabilized > max) [replicas, limit] = [max, l];
    } else if (stabilized < a.currentReplicas) {
      const rateLimit = Math.min(a.currentReplicas, this.scaleDownLimit(a.currentReplicas, ups, downs, down));
      let min = a.minReplicas;
      let l = limited('TooFewReplicas', 'the desired replica count is less than the minimum replica count');
      if (min < rateLimit) {
        min = rateLimit;
        l = limited(
          'ScaleDownLimit',
          'the desired replica count is decreasing faster than the maximum scale rate',
        );
      }
      if (stabilized < min) [replicas, limit] = [min, l];
    }
    conditions.push({ ...limit, status: replicas === stabilized ? 'False' : 'True' });
    stabilized = replicas;
    return { replicas: stabilized, conditions };
  }

  /** Replicas added (or removed) by the events of the last periodSeconds. */
  private changeInPeriod(periodSeconds: number, events: ScaleEvent[]): number {
    const cutoff = this.now() - periodSeconds * 1000;
    return events.reduce((s, e) => (e.at > cutoff ? s + e.change : s), 0);
  }

  private scaleUpLimit(
    current: number,
    ups: ScaleEvent[],
    downs: ScaleEvent[],
    rules: Required<ScalingRules>,
  ): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
    let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
    for (const p of rules.policies) {
      const start =
        current - this.changeInPeriod(p.periodSeconds, ups) + this.changeInPeriod(p.periodSeconds, downs);
      const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
      result = pick(result, proposed);
    }
    return result;
  }

  private scaleDownLimit(
    current: number,
    ups: ScaleEvent[],
    downs: ScaleEvent[],
    rules: Required<ScalingRules>,
  ): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
    let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
    for (const p of rules.policies) {
      const start =
        current - this.changeInPeriod(p.periodSeconds, ups) + this.changeInPeriod(p.periodSeconds, downs);
      const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
      result = pick(result, proposed);
    }
    return result;
  }

  /** Remembers a rescale for the rate limits of spec.behavior (kube keeps none without it). */
  storeScaleEvent(key: string, behavior: Behavior | undefined, prev: number, next: number): void {
    if (!behavior || prev === next) return;
    const isUp = next > prev;
    const rules = withDefaults(isUp ? behavior.scaleUp : behavior.scaleDown, isUp);
    const store = isUp ? this.scaleUpEvents : this.scaleDownEvents;
    const events = store.get(key) ?? [];
    const longest = Math.max(0, ...rules.policies.map((p) => p.periodSeconds));
    const cutoff = this.now() - longest * 1000;
    for (const e of events) if (e.at < cutoff) e.outdated = true;
    const entry = { change: Math.abs(next - prev), at: this.now(), outdated: false };
    const i = events.map((e) => e.outdated).lastIndexOf(true);
    if (i >= 0) events[i] = entry;
    else events.push(entry);
    store.set(key, events);
  }
}

const HIGHER_MESSAGE =
  'recent recommendations were higher than current one, applying the highest recent recommendation';

function able(reason: string, message: string): ConditionUpdate {
  return { type: 'AbleToScale', status: 'True', reason, message };
}

function limited(reason: string, message: string): ConditionUpdate {
  return { type: 'ScalingLimited', status: 'False', reason, message };
}
