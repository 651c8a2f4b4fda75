// Hard eviction thresholds (--eviction-hard, evictionHard in the config file)
// and the node pressure conditions they drive, like the kubelet's eviction
// manager: a threshold is met when the observed available amount of a signal
// falls below it (an absolute quantity or a percentage of capacity); the
// condition it maps to stays True until the threshold has not been met for
// --eviction-pressure-transition-period (hysteresis against flapping).
import { milliValue, parseQuantity } from '../../shared/api/validation/quantity';
import { realClock, type Clock } from '../../shared/client/clock';

export const SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
] as const;
export type Signal = (typeof SIGNALS)[number];

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

export const SIGNAL_CONDITION: Record<Signal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

export interface Threshold {
  signal: Signal;
  /** The only operator the kubelet supports. */
  operator: 'LessThan';
  /** Absolute amount (bytes, inodes or pids) ... */
  quantity?: bigint;
  /** ... or a fraction (0..1] of the signal's capacity. */
  percentage?: number;
  /** The text as given ("100Mi", "10%"). */
  text: string;
}

/** What was measured of one signal: how much is available out of how much. */
export interface Observation {
  available: number;
  capacity: number;
}

export type Observations = Partial<Record<Signal, Observation>>;

/**
 * Parses "memory.available<100Mi,nodefs.available<10%" (or a map of signal to
 * value, as evictionHard in a KubeletConfiguration). Zero thresholds are
 * dropped, as the kubelet does.
 */
export function parseThresholds(input: string | Record<string, string>): Threshold[] {
  const statements: [string, string][] = [];
  if (typeof input === 'string') {
    for (const raw of input.split(',')) {
      const s = raw.trim();
      if (!s) continue;
      const i = s.indexOf('<');
      if (i <= 0)
        throw new Error(`invalid eviction threshold syntax ${s}, expected <signal><operator><value>`);
      statements.push([s.slice(0, i).trim(), s.slice(i + 1).trim()]);
    }
  } else {
    for (const [k, v] of Object.entries(input)) statements.push([k, String(v).trim()]);
  }
  const out: Threshold[] = [];
  const seen = new Set<string>();
  for (const [signal, value] of statements) {
    if (!(SIGNALS as readonly string[]).includes(signal))
      throw new Error(`unsupported eviction signal ${signal}`);
    if (seen.has(signal)) throw new Error(`found duplicate eviction threshold for signal ${signal}`);
    seen.add(signal);
    if (!value)
      throw new Error(`invalid eviction threshold syntax ${signal}<, expected <signal><operator><value>`);
    if (value.endsWith('%')) {
      const n = Number(value.slice(0, -1));
      if (!Number.isFinite(n) || value.slice(0, -1).trim() === '')
        throw new Error(`invalid eviction threshold value ${value} for signal ${signal}`);
      if (n < 0 || n > 100)
        throw new Error(`eviction percentage threshold ${signal} must be >= 0% and <= 100%: ${value}`);
      if (n === 0) continue;
      out.push({ signal: signal as Signal, operator: 'LessThan', percentage: n / 100, text: value });
      continue;
    }
    let q: bigint;
    try {
      q = milliValue(parseQuantity(value)) / 1000n;
    } catch (err) {
      throw new Error(
        `invalid eviction threshold value ${value} for signal ${signal}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    if (q < 0n) throw new Error(`eviction threshold ${signal} must be positive: ${value}`);
    if (q === 0n) continue;
    out.push({ signal: signal as Signal, operator: 'LessThan', quantity: q, text: value });
  }
  return out;
}

/** The thresholds back in flag syntax (for logs and /configz). */
export function formatThresholds(ts: Threshold[]): string {
  return ts.map((t) => `${t.signal}<${t.text}`).join(',');
}

/** The amount a threshold stands for against a capacity. */
export function thresholdAmount(t: Threshold, capacity: number): number {
  if (t.quantity !== undefined) return Number(t.quantity);
  return Math.floor((t.percentage ?? 0) * capacity);
}

/** The thresholds met by the observations (signals not observed never are). */
export function thresholdsMet(ts: Threshold[], obs: Observations): Threshold[] {
  return ts.filter((t) => {
    const o = obs[t.signal];
    return !!o && o.available < thresholdAmount(t, o.capacity);
  });
}

/**
 * What allocatable keeps back from capacity for the hard thresholds: memory
 * for memory.available, ephemeral-storage for nodefs.available (the kubelet's
 * node allocatable reservation).
 */
export function evictionReservation(
  ts: Threshold[],
  capacity: { memory: number; ephemeralStorage: number },
): { memory: number; ephemeralStorage: number } {
  let memory = 0;
  let ephemeralStorage = 0;
  for (const t of ts) {
    if (t.signal === 'memory.available') memory += thresholdAmount(t, capacity.memory);
    if (t.signal === 'nodefs.available') ephemeralStorage += thresholdAmount(t, capacity.ephemeralStorage);
  }
  return { memory, ephemeralStorage };
}

/** The pressure conditions with the transition period's hysteresis. */
export class PressureTracker {
  private readonly lastObserved = new Map<PressureCondition, number>();
  private met: Threshold[] = [];

  constructor(
    readonly thresholds: Threshold[],
    readonly transitionPeriodMs: number,
    private readonly clock: Clock = realClock,
  ) {}

  /** Records one synchronization of observations. */
  observe(obs: Observations): void {
    const now = this.clock.now();
    this.met = thresholdsMet(this.thresholds, obs);
    for (const t of this.met) this.lastObserved.set(SIGNAL_CONDITION[t.signal], now);
  }

  /** The thresholds met at the last observation. */
  lastMet(): Threshold[] {
    return this.met;
  }

  /** True while the condition's thresholds are met or were within the transition period. */
  underPressure(cond: PressureCondition): boolean {
    const at = this.lastObserved.get(cond);
    if (at === undefined) return false;
    if (this.met.some((t) => SIGNAL_CONDITION[t.signal] === cond)) return true;
    return this.clock.now() - at < this.transitionPeriodMs;
  }
}
