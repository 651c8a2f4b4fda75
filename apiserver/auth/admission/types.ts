// Admission: mutating plugins run first (they may change the object), then
// validating ones (they may only reject). Every plugin is dry-run aware: it
// must have no side effects when attributes.dryRun is set.
import type { UserInfo } from '../../registry/context';
import { ReinvocationContext } from './reinvocation';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  kind: string;
  namespace: string;
  name: string;
  /** The object being written (mutating plugins may change it); for DELETE the stored object. */
  object: any;
  oldObject: any | null;
  dryRun: boolean;
  user: UserInfo;
  /** The request's Warning header texts (PodSecurity warn, webhook warnings). */
  warnings?: string[];
  /** The request's audit annotations (PodSecurity audit, webhook annotations). */
  auditAnnotations?: Record<string, string>;
  /** The mutating phase's reinvocation state (set by the chain). */
  reinvocation?: ReinvocationContext;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating phase. */
  admit?(a: AdmissionAttributes): Promise<void> | void;
  /** Validating phase; throw a StatusError to reject. */
  validate?(a: AdmissionAttributes): Promise<void> | void;
}

/** A PUT that creates is a CREATE to admission, as in Kubernetes. */
function normalize(a: AdmissionAttributes): void {
  if (a.operation === 'UPDATE' && !a.oldObject) a.operation = 'CREATE';
}

export class AdmissionChain {
  constructor(readonly plugins: AdmissionPlugin[]) {}

  /** The mutating phase; run a second time when a plugin asks for reinvocation, as Kubernetes does. */
  async admit(a: AdmissionAttributes): Promise<void> {
    normalize(a);
    const r = (a.reinvocation ??= new ReinvocationContext());
    await this.each(a, 'admit');
    if (!r.shouldReinvoke) return;
    r.isReinvoke = true;
    await this.each(a, 'admit');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    normalize(a);
    await this.each(a, 'validate');
  }

  /** Runs one phase of every plugin in order; a plugin that finished synchronously costs no turn of the event loop. */
  private async each(a: AdmissionAttributes, phase: 'admit' | 'validate'): Promise<void> {
    for (const p of this.plugins) {
      const done = p[phase]?.(a);
      if (done) await done;
    }
  }

  has(name: string): boolean {
    return this.plugins.some((p) => p.name === name);
  }
}
