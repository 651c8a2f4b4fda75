// The downward API as the kubelet evaluates it, for env (fieldRef,
// resourceFieldRef) and for downwardAPI volume files: a pod field by its
// fieldPath, a container's resource limit or request in units of a divisor
// (limits default to the node's allocatable, as kubelet's
// defaultPodLimitsForDownwardAPI does).
import {
  isZeroQuantity,
  milliValue,
  parseQuantity,
  type Quantity,
} from '../../shared/api/validation/quantity';
import { goQuote } from '../../shared/codec/go-strconv';

/** What the pod's own object does not hold: its addresses and the node's allocatable. */
export interface DownwardContext {
  podIPs: string[];
  hostIPs: string[];
  /** The node's allocatable (cpu, memory, ephemeral-storage), the default of unset limits. */
  allocatable: Record<string, string>;
}

/** kubelet's formatMap: key="value" lines sorted by key. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(m![k])}`)
    .join('\n');
}

/** metadata.labels['x'] → ['metadata.labels', 'x']. */
function splitSubscript(path: string): [string, string | undefined] {
  const m = /^(.*)\['(.*)'\]$/.exec(path);
  return m ? [m[1], m[2]] : [path, undefined];
}

/** The value of a pod field (fieldRef.fieldPath); throws for a path the kubelet does not support. */
export function podFieldValue(pod: any, fieldPath: string, ctx: DownwardContext): string {
  const md = pod.metadata ?? {};
  switch (fieldPath) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIPs.join(',');
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    case 'metadata.labels':
      return formatMap(md.labels);
    case 'metadata.annotations':
      return formatMap(md.annotations);
  }
  const [base, key] = splitSubscript(fieldPath);
  if (key !== undefined && base === 'metadata.labels') return md.labels?.[key] ?? '';
  if (key !== undefined && base === 'metadata.annotations') return md.annotations?.[key] ?? '';
  throw new Error(`unsupported fieldPath: ${fieldPath}`);
}

function quantity(v: unknown): Quantity | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  return parseQuantity(String(v));
}

/** Integer value rounded up (Quantity.Value). */
function ceilValue(q: Quantity): bigint {
  const m = milliValue(q);
  return m >= 0n ? (m + 999n) / 1000n : m / 1000n;
}

/**
 * A container's resource (resourceFieldRef.resource) in units of the divisor, rounded up like
 * kubelet's convertResourceCPUToString / convertResourceMemoryToString.
 */
export function containerResourceValue(
  container: any,
  resource: string,
  divisor: unknown,
  ctx: DownwardContext,
): string {
  const [kind, name] = resource.split(/\.(.*)/s) as [string, string];
  if ((kind !== 'limits' && kind !== 'requests') || !name)
    throw new Error(`unsupported container resource : ${resource}`);
  const res = container.resources ?? {};
  let q = quantity(res[kind]?.[name]);
  // Unset (or zero) limits default to the node's allocatable (MergeContainerResourceLimits).
  if ((!q || isZeroQuantity(q)) && kind === 'limits') q = quantity(ctx.allocatable[name]) ?? q;
  q ??= parseQuantity('0');
  // A zero divisor is the unset one (Go clients send their zero Quantity as "0"): it means 1.
  let div = quantity(divisor);
  if (!div || isZeroQuantity(div)) div = parseQuantity('1');
  if (name === 'cpu') {
    const dm = milliValue(div);
    if (dm === 0n) throw new Error('divisor must not be zero');
    const m = milliValue(q);
    return String((m + dm - 1n) / dm);
  }
  if (name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-')) {
    const dv = ceilValue(div);
    if (dv === 0n) throw new Error('divisor must not be zero');
    const v = ceilValue(q);
    return String((v + dv - 1n) / dv);
  }
  throw new Error(`unsupported container resource : ${resource}`);
}

/** The container of a pod by name (containers, then init containers). */
export function podContainer(pod: any, name: string): any {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (c: any) => c.name === name,
  );
}
