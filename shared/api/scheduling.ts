// What decides whether a pod may land on a node, shared by the scheduler, the
// DaemonSet controller and the node agent's admission (kubelet runs the
// scheduler's checks too): taints and tolerations, nodeSelector and required
// node affinity (matchExpressions and matchFields), resource requests, and
// host ports.
import { quantityFromJSON, milliValue } from './validation/quantity';
import { tolerationsTolerateTaint, type Taint, type Toleration } from './taints';

/** A Pod or Node as JSON. */
type Obj = { metadata?: any; spec?: any; status?: any };

/** The first taint (of the effects given) that no toleration tolerates. */
export function findUntoleratedTaint(
  taints: Taint[] | undefined,
  tolerations: Toleration[] | undefined,
  effects: string[],
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!effects.includes(taint.effect)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return taint;
  }
  return undefined;
}

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

function requirementMatches(r: Requirement, value: string | undefined): boolean {
  const has = value !== undefined;
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(value);
    case 'NotIn':
      return !has || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0])) return false;
      return r.operator === 'Gt' ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
    }
    default:
      return false;
  }
}

/** A NodeSelectorTerm: all its expressions and fields; an empty term matches nothing. */
export function nodeSelectorTermMatches(term: any, node: Obj): boolean {
  const exprs: Requirement[] = term?.matchExpressions ?? [];
  const fields: Requirement[] = term?.matchFields ?? [];
  if (!exprs.length && !fields.length) return false;
  const labels = node.metadata.labels ?? {};
  for (const e of exprs) if (!requirementMatches(e, labels[e.key])) return false;
  for (const f of fields) {
    if (f.key !== 'metadata.name') return false;
    if (!requirementMatches(f, node.metadata.name)) return false;
  }
  return true;
}

/** A NodeSelector: any of its terms. */
export function nodeSelectorMatches(sel: any, node: Obj): boolean {
  const terms: any[] = sel?.nodeSelectorTerms ?? [];
  return terms.some((t) => nodeSelectorTermMatches(t, node));
}

/** The pod's nodeSelector and required node affinity both select the node. */
export function podMatchesNodeSelectorAndAffinity(podSpec: any, node: Obj): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries<string>(podSpec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = podSpec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required && !nodeSelectorMatches(required, node)) return false;
  return true;
}

// ---- resources ----------------------------------------------------------------

/** Resource amounts in milli-units (cpu in millicores, memory in milli-bytes ...). */
export type Resources = Map<string, number>;

export function toMilli(list: Record<string, unknown> | undefined | null): Resources {
  const out: Resources = new Map();
  for (const [k, v] of Object.entries(list ?? {})) {
    try {
      out.set(k, Number(milliValue(quantityFromJSON(v))));
    } catch {
      // an unparseable quantity counts as nothing
    }
  }
  return out;
}

export function addInto(a: Resources, b: Resources): Resources {
  for (const [k, v] of b) a.set(k, (a.get(k) ?? 0) + v);
  return a;
}

function maxInto(a: Resources, b: Resources): Resources {
  for (const [k, v] of b) a.set(k, Math.max(a.get(k) ?? 0, v));
  return a;
}

/** The pod's effective requests: max(sum of containers, each init container) + overhead. */
export function podRequests(pod: Obj): Resources {
  const sum: Resources = new Map();
  for (const c of pod.spec?.containers ?? []) addInto(sum, toMilli(c.resources?.requests));
  const init: Resources = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    // Sidecars (restartPolicy Always) run beside the app containers.
    if (c.restartPolicy === 'Always') addInto(sum, toMilli(c.resources?.requests));
    else maxInto(init, toMilli(c.resources?.requests));
  }
  maxInto(sum, init);
  if (pod.spec?.overhead) addInto(sum, toMilli(pod.spec.overhead));
  return sum;
}

/** The pod's effective limits (like requests). */
export function podLimits(pod: Obj): Resources {
  const sum: Resources = new Map();
  for (const c of pod.spec?.containers ?? []) addInto(sum, toMilli(c.resources?.limits));
  const init: Resources = new Map();
  for (const c of pod.spec?.initContainers ?? []) maxInto(init, toMilli(c.resources?.limits));
  maxInto(sum, init);
  if (pod.spec?.overhead) {
    const o = toMilli(pod.spec.overhead);
    for (const [k, v] of o) if (sum.has(k)) sum.set(k, sum.get(k)! + v);
  }
  return sum;
}

/** Formats milli-units back as a Quantity string (canonical for cpu and integers). */
export function formatMilli(name: string, milli: number): string {
  if (milli % 1000 === 0) {
    const v = milli / 1000;
    if (name.endsWith('memory') || name.endsWith('storage') || name.includes('hugepages-'))
      return formatBinary(v);
    return String(v);
  }
  return `${milli}m`;
}

function formatBinary(bytes: number): string {
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  if (bytes === 0) return '0';
  let v = bytes;
  let i = 0;
  while (i < units.length - 1 && v % 1024 === 0) {
    v /= 1024;
    i++;
  }
  if (i === 0) {
    // decimal SI like Kubernetes prints plain numbers
    return String(bytes);
  }
  return `${v}${units[i]}`;
}

/**
 * A pod's host ports as "PROTOCOL/hostIP/port", the way kube-scheduler's
 * HostPortInfo keeps them: protocol TCP and host IP 0.0.0.0 when unset.
 */
export function hostPortsOf(pod: Obj): string[] {
  const out: string[] = [];
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? [])
      if (p.hostPort > 0) out.push(`${p.protocol || 'TCP'}/${p.hostIP || '0.0.0.0'}/${p.hostPort}`);
  return out;
}

/**
 * HostPortInfo.CheckConflict: the same protocol and port on overlapping host
 * IPs (0.0.0.0 overlaps every address). Another protocol or another specific
 * address is no conflict.
 */
export function hostPortsConflict(want: string[], used: Iterable<string>): boolean {
  if (!want.length) return false;
  const usedKeys = [...used];
  for (const w of want) {
    const [proto, ip, port] = w.split('/');
    for (const u of usedKeys) {
      const [p2, ip2, port2] = u.split('/');
      if (proto !== p2 || port !== port2) continue;
      if (ip === ip2 || ip === '0.0.0.0' || ip2 === '0.0.0.0') return true;
    }
  }
  return false;
}
