// Small pod plugins: DefaultTolerationSeconds, Priority, RuntimeClass,
// AlwaysPullImages (plugin/pkg/admission/{defaulttolerationseconds,priority,runtimeclass,alwayspullimages}).
import { TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../../shared/api/taints';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, allContainers, isPods, Lister, jsonClone } from './util';

/** Adds NoExecute tolerations for not-ready and unreachable nodes (tolerationSeconds from the flags). */
export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';
  constructor(
    private readonly notReadySeconds: number,
    private readonly unreachableSeconds: number,
  ) {}

  admit(a: AdmissionAttributes): void {
    if (!isPods(a) || a.subresource || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
    const pod = a.object;
    if (!pod?.spec) return;
    const tolerations: any[] = pod.spec.tolerations ?? [];
    const tolerates = (key: string) =>
      tolerations.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
    const add: any[] = [];
    if (!tolerates(TAINT_NOT_READY))
      add.push({
        key: TAINT_NOT_READY,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: this.notReadySeconds,
      });
    if (!tolerates(TAINT_UNREACHABLE))
      add.push({
        key: TAINT_UNREACHABLE,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: this.unreachableSeconds,
      });
    if (add.length) pod.spec.tolerations = [...tolerations, ...add];
  }
}

/** Resolves priorityClassName to priority (and preemptionPolicy); one globalDefault class at most. */
export class Priority implements AdmissionPlugin {
  readonly name = 'Priority';
  private readonly classes: Lister;
  constructor(registry: () => Registry) {
    this.classes = new Lister(registry, 'scheduling.k8s.io', 'priorityclasses');
  }

  private async defaultClass(): Promise<any | null> {
    let best: any = null;
    for (const pc of await this.classes.list())
      if (pc.globalDefault && (!best || best.value > pc.value)) best = pc;
    return best;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPods(a) || a.subresource) return;
    const pod = a.object;
    if (!pod?.spec) return;
    if (a.operation === 'UPDATE') {
      const old = a.oldObject?.spec ?? {};
      if (pod.spec.priority === undefined && old.priority !== undefined) pod.spec.priority = old.priority;
      if (pod.spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined)
        pod.spec.preemptionPolicy = old.preemptionPolicy;
      return;
    }
    if (a.operation !== 'CREATE') return;
    let priority = 0;
    let preemptionPolicy: string | undefined;
    if (!pod.spec.priorityClassName) {
      const dpc = await this.defaultClass();
      if (dpc) {
        pod.spec.priorityClassName = dpc.metadata.name;
        priority = dpc.value ?? 0;
        preemptionPolicy = dpc.preemptionPolicy;
      } else preemptionPolicy = 'PreemptLowerPriority';
    } else {
      const pc = await this.classes.get('', pod.spec.priorityClassName);
      if (!pc)
        throw admissionForbidden(a, `no PriorityClass with name ${pod.spec.priorityClassName} was found`);
      priority = pc.value ?? 0;
      preemptionPolicy = pc.preemptionPolicy;
    }
    if (pod.spec.priority !== undefined && pod.spec.priority !== null && pod.spec.priority !== priority)
      throw admissionForbidden(
        a,
        `the integer value of priority (${pod.spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    pod.spec.priority = priority;
    if (preemptionPolicy) {
      if (pod.spec.preemptionPolicy && pod.spec.preemptionPolicy !== preemptionPolicy)
        throw admissionForbidden(
          a,
          `the string value of PreemptionPolicy (${pod.spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`,
        );
      pod.spec.preemptionPolicy = preemptionPolicy;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.group !== 'scheduling.k8s.io' || a.resource !== 'priorityclasses' || a.subresource) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    if (!a.object?.globalDefault) return;
    const dpc = await this.defaultClass();
    if (!dpc) return;
    if (a.operation === 'CREATE' || dpc.metadata.name !== a.object.metadata?.name)
      throw admissionForbidden(
        a,
        `PriorityClass ${dpc.metadata.name} is marked as default. Only one default can exist`,
      );
  }
}

/** Sets pod overhead and scheduling constraints from the pod's RuntimeClass. */
export class RuntimeClass implements AdmissionPlugin {
  readonly name = 'RuntimeClass';
  private readonly classes: Lister;
  constructor(registry: () => Registry) {
    this.classes = new Lister(registry, 'node.k8s.io', 'runtimeclasses');
  }

  private async lookup(a: AdmissionAttributes): Promise<any | null> {
    const name = a.object?.spec?.runtimeClassName;
    if (!name) return null;
    const rc = await this.classes.get('', name);
    if (!rc) throw admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPods(a) || a.subresource || a.operation !== 'CREATE') return;
    const pod = a.object;
    const rc = await this.lookup(a);
    if (!rc) return;
    const fixed = rc.overhead?.podFixed;
    if (fixed) {
      if (pod.spec.overhead && JSON.stringify(pod.spec.overhead) !== JSON.stringify(fixed))
        throw admissionForbidden(
          a,
          "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        );
      pod.spec.overhead = jsonClone(fixed);
    }
    const sched = rc.scheduling;
    if (!sched) return;
    if (sched.nodeSelector) {
      const sel: Record<string, string> = { ...(pod.spec.nodeSelector ?? {}) };
      for (const [k, v] of Object.entries(sched.nodeSelector as Record<string, string>)) {
        if (k in sel && sel[k] !== v)
          throw admissionForbidden(
            a,
            `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${sel[k]}`,
          );
        sel[k] = v;
      }
      pod.spec.nodeSelector = sel;
    }
    if (sched.tolerations?.length) {
      const have: any[] = pod.spec.tolerations ?? [];
      const key = (t: any) => JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
      const seen = new Set(have.map(key));
      const merged = [...have];
      for (const t of sched.tolerations) if (!seen.has(key(t))) merged.push(jsonClone(t));
      pod.spec.tolerations = merged;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPods(a) || a.subresource || a.operation !== 'CREATE') return;
    const rc = await this.lookup(a);
    const overhead = a.object?.spec?.overhead;
    if (!rc) {
      if (overhead)
        throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass');
      return;
    }
    const fixed = rc.overhead?.podFixed;
    if (overhead && (!fixed || JSON.stringify(overhead) !== JSON.stringify(fixed)))
      throw admissionForbidden(
        a,
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
      );
  }
}

/** Forces imagePullPolicy Always on every container. */
export class AlwaysPullImages implements AdmissionPlugin {
  readonly name = 'AlwaysPullImages';
  admit(a: AdmissionAttributes): void {
    if (!isPods(a) || (a.subresource && a.subresource !== 'ephemeralcontainers')) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    for (const c of allContainers(a.object?.spec)) c.imagePullPolicy = 'Always';
  }
  validate(a: AdmissionAttributes): void {
    if (!isPods(a) || (a.subresource && a.subresource !== 'ephemeralcontainers')) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    for (const c of allContainers(a.object?.spec))
      if (c.imagePullPolicy !== 'Always')
        throw admissionForbidden(
          a,
          `spec.containers.imagePullPolicy: Unsupported value: "${c.imagePullPolicy}": supported values: "Always"`,
        );
  }
}
