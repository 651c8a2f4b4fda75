// Reinvocation (k8s.io/apiserver/pkg/admission/reinvocation.go): when a
// mutating policy or webhook changed the object, the whole mutating chain runs
// a second time, and on that second run a policy or webhook with
// reinvocationPolicy IfNeeded runs again if the object changed after it ran.
import { jsonEqual } from '../../../shared/api/json-value';

/** The state of one request's mutating phase, shared by its plugins. */
export class ReinvocationContext {
  /** Set while the chain runs for the second time. */
  isReinvoke = false;
  /** Set by a plugin whose mutation asks for the second run. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();

  /** A plugin's own state, created on first use. */
  value<T>(plugin: string, make: () => T): T {
    if (!this.values.has(plugin)) this.values.set(plugin, make());
    return this.values.get(plugin) as T;
  }
}

/**
 * Which of one plugin's hooks (a webhook, a policy+binding+param) run again on
 * the second run: those with IfNeeded that ran before a later change.
 */
export class HookReinvocation {
  private lastOutput: unknown = undefined;
  private previouslyInvoked = new Set<string>();
  private readonly reinvoke = new Set<string>();

  shouldReinvoke(key: string): boolean {
    return this.reinvoke.has(key);
  }

  /** Whether the object changed since this plugin last returned (another plugin changed it). */
  changedSinceLastInvocation(object: unknown): boolean {
    return !jsonEqual(this.lastOutput, object ?? null);
  }

  setLastInvocationOutput(object: unknown): void {
    this.lastOutput = object == null ? null : structuredClone(object);
  }

  addReinvocable(key: string): void {
    this.previouslyInvoked.add(key);
  }

  /** A change happened: every IfNeeded hook that already ran runs again. */
  requireReinvokingPreviouslyInvoked(): void {
    for (const k of this.previouslyInvoked) this.reinvoke.add(k);
    this.previouslyInvoked = new Set();
  }
}
