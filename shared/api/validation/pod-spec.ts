// PodSpec validation (pkg/apis/core/validation ValidatePodSpec and friends):
// the rules users meet first, with Kubernetes' paths and messages.
import type { FieldError } from '../field-errors';
import { duplicate, forbidden, invalid, notSupported, required } from '../field-errors';
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum } from './names';
import { validateLabels, validateNonnegative } from './metadata';
import { asArr, asObj, asStr, child, index, isSet, key, type Obj } from './path';
import { compareQuantity, milliValue, parseQuantity, formatQuantity, type Quantity } from './quantity';
import { volumeSourcesOf } from '../volume-sources';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const notFound = (field: string, badValue: unknown): FieldError => ({
  type: 'FieldValueNotFound',
  field,
  badValue,
});

/** ValidatePortNumOrName for an IntOrString port. */
export function validatePortNumOrName(port: unknown, p: string): FieldError[] {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(p, port, m));
  if (typeof port === 'string') return isValidPortName(port).map((m) => invalid(p, port, m));
  return [];
}

export interface PodSpecContext {
  /** Pod templates (workloads) vs Pods: templates skip nothing here, but callers differ. */
  template?: boolean;
  /**
   * Volumes the workload adds to each pod besides the template's own: a StatefulSet's claim
   * templates (volumesToAddForTemplates), which mounts may name.
   */
  addedVolumes?: readonly string[];
}

export function validatePodSpec(spec: Obj | undefined, p: string, ctx: PodSpecContext = {}): FieldError[] {
  const s = spec ?? {};
  const errs: FieldError[] = [];
  const volumeNames = new Set<string>();
  errs.push(...validateVolumes(s.volumes, child(p, 'volumes'), volumeNames));
  for (const name of ctx.addedVolumes ?? []) volumeNames.add(name);
  const names = new Set<string>();
  const containers = asArr(s.containers);
  if (containers.length === 0) errs.push(required(child(p, 'containers'), ''));
  errs.push(...validateContainers(asArr(s.initContainers), child(p, 'initContainers'), names, volumeNames));
  errs.push(...validateContainers(containers, child(p, 'containers'), names, volumeNames));
  if (!asStr(s.restartPolicy)) errs.push(required(child(p, 'restartPolicy'), ''));
  if (!asStr(s.dnsPolicy)) errs.push(required(child(p, 'dnsPolicy'), ''));
  else if (s.dnsPolicy === 'None' && !asObj(s.dnsConfig))
    errs.push(required(child(p, 'dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  errs.push(...validateLabels(s.nodeSelector, child(p, 'nodeSelector')));
  const sa = asStr(s.serviceAccountName);
  if (sa) for (const m of isDNS1123Subdomain(sa)) errs.push(invalid(child(p, 'serviceAccountName'), sa, m));
  for (const f of ['hostname', 'subdomain']) {
    const v = asStr(s[f]);
    if (v) for (const m of isDNS1123Label(v)) errs.push(invalid(child(p, f), v, m));
  }
  if (typeof s.activeDeadlineSeconds === 'number' && s.activeDeadlineSeconds < 1)
    errs.push(
      invalid(
        child(p, 'activeDeadlineSeconds'),
        s.activeDeadlineSeconds,
        'must be between 1 and 2147483647, inclusive',
      ),
    );
  errs.push(...validateTolerations(s.tolerations, child(p, 'tolerations')));
  asArr(s.imagePullSecrets).forEach((r, i) => {
    if (!asStr(asObj(r)?.name))
      errs.push(required(child(index(child(p, 'imagePullSecrets'), i), 'name'), ''));
  });
  return errs;
}

function validateVolumes(volumes: unknown, p: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  asArr(volumes).forEach((v, i) => {
    const vol = asObj(v) ?? {};
    const ip = index(p, i);
    const name = asStr(vol.name);
    errs.push(...validateVolumeSource(vol, ip));
    if (!name) errs.push(required(child(ip, 'name'), ''));
    else for (const m of isDNS1123Label(name)) errs.push(invalid(child(ip, 'name'), name, m));
    if (names.has(name)) errs.push(duplicate(child(ip, 'name'), name));
    else names.add(name);
  });
  return errs;
}

function validateVolumeSource(vol: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const present = volumeSourcesOf(vol);
  if (present.length === 0) return [required(p, 'must specify a volume type')];
  for (const extra of present.slice(1))
    errs.push(forbidden(child(p, extra), 'may not specify more than 1 volume type'));
  const src = asObj(vol[present[0]]) ?? {};
  const sp = child(p, present[0]);
  const req = (f: string) => {
    if (!asStr(src[f])) errs.push(required(child(sp, f), ''));
  };
  switch (present[0]) {
    case 'hostPath':
      req('path');
      break;
    case 'configMap':
      req('name');
      break;
    case 'secret':
      req('secretName');
      break;
    case 'persistentVolumeClaim':
      req('claimName');
      break;
    case 'nfs':
      req('server');
      req('path');
      break;
    case 'csi':
      req('driver');
      break;
  }
  return errs;
}

function validateContainers(
  list: unknown[],
  p: string,
  names: Set<string>,
  volumes: Set<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((c, i) => {
    const ctr = asObj(c) ?? {};
    const ip = index(p, i);
    const name = asStr(ctr.name);
    if (!name) errs.push(required(child(ip, 'name'), ''));
    else for (const m of isDNS1123Label(name)) errs.push(invalid(child(ip, 'name'), name, m));
    if (names.has(name)) errs.push(duplicate(child(ip, 'name'), name));
    else names.add(name);
    if (!asStr(ctr.image)) errs.push(required(child(ip, 'image'), ''));
    errs.push(...validateContainerPorts(ctr.ports, child(ip, 'ports')));
    errs.push(...validateEnv(ctr.env, child(ip, 'env')));
    errs.push(...validateVolumeMounts(ctr.volumeMounts, child(ip, 'volumeMounts'), volumes));
    errs.push(...validateResources(ctr.resources, child(ip, 'resources')));
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'])
      if (isSet(ctr[probe]))
        errs.push(...validateProbe(asObj(ctr[probe]) ?? {}, child(ip, probe), probe !== 'readinessProbe'));
    if (!asStr(ctr.imagePullPolicy)) errs.push(required(child(ip, 'imagePullPolicy'), ''));
    if (!asStr(ctr.terminationMessagePolicy)) errs.push(required(child(ip, 'terminationMessagePolicy'), ''));
  });
  return errs;
}

function validateContainerPorts(ports: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  asArr(ports).forEach((x, i) => {
    const port = asObj(x) ?? {};
    const ip = index(p, i);
    const name = asStr(port.name);
    if (name) {
      const msgs = isValidPortName(name);
      if (msgs.length) for (const m of msgs) errs.push(invalid(child(ip, 'name'), name, m));
      else if (names.has(name)) errs.push(duplicate(child(ip, 'name'), name));
      else names.add(name);
    }
    const cp = typeof port.containerPort === 'number' ? port.containerPort : 0;
    if (cp === 0) errs.push(required(child(ip, 'containerPort'), ''));
    else for (const m of isValidPortNum(cp)) errs.push(invalid(child(ip, 'containerPort'), cp, m));
    if (typeof port.hostPort === 'number' && port.hostPort !== 0)
      for (const m of isValidPortNum(port.hostPort))
        errs.push(invalid(child(ip, 'hostPort'), port.hostPort, m));
    const proto = asStr(port.protocol);
    if (!proto) errs.push(required(child(ip, 'protocol'), ''));
    else if (!PROTOCOLS.includes(proto)) errs.push(notSupported(child(ip, 'protocol'), proto, PROTOCOLS));
  });
  return errs;
}

function validateEnv(env: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(env).forEach((x, i) => {
    const ev = asObj(x) ?? {};
    const ip = index(p, i);
    const name = asStr(ev.name);
    if (!name) errs.push(required(child(ip, 'name'), ''));
    else if (!/^[\x21-\x3c\x3e-\x7e][\x20-\x3c\x3e-\x7e]*$/.test(name))
      errs.push(
        invalid(
          child(ip, 'name'),
          name,
          "a valid environment variable name must consist only of printable ASCII characters other than '='",
        ),
      );
    const from = asObj(ev.valueFrom);
    if (from) {
      const kinds = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter(
        (k) => isSet(from[k]),
      );
      if (isSet(ev.value) && asStr(ev.value) !== '')
        errs.push(invalid(child(ip, 'valueFrom'), '', 'may not be specified when `value` is not empty'));
      if (kinds.length === 0)
        errs.push(
          invalid(
            child(ip, 'valueFrom'),
            '',
            'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`',
          ),
        );
      else if (kinds.length > 1)
        errs.push(
          invalid(child(ip, 'valueFrom'), '', 'may not have more than one field specified at a time'),
        );
    }
  });
  return errs;
}

function validateVolumeMounts(mounts: unknown, p: string, volumes: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  asArr(mounts).forEach((x, i) => {
    const m = asObj(x) ?? {};
    const ip = index(p, i);
    const name = asStr(m.name);
    const mountPath = asStr(m.mountPath);
    if (!name) errs.push(required(child(ip, 'name'), ''));
    else if (!volumes.has(name)) errs.push(notFound(child(ip, 'name'), name));
    if (!mountPath) errs.push(required(child(ip, 'mountPath'), ''));
    if (paths.has(mountPath)) errs.push(invalid(child(ip, 'mountPath'), mountPath, 'must be unique'));
    paths.add(mountPath);
  });
  return errs;
}

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const isHugePages = (n: string) => n.startsWith('hugepages-');
const isNative = (n: string) => !n.includes('/') || n.includes('kubernetes.io/');
/** Requests may be below limits only for native, non-hugepage resources. */
const overcommitAllowed = (n: string) => isNative(n) && !isHugePages(n);

export function validateResources(res: unknown, p: string): FieldError[] {
  const r = asObj(res) ?? {};
  const errs: FieldError[] = [];
  const parse = (m: Obj, mp: string): Map<string, Quantity> => {
    const out = new Map<string, Quantity>();
    for (const [name, v] of Object.entries(m)) {
      const fp = key(mp, name);
      if (!name.includes('/') && !STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name))
        errs.push(invalid(fp, name, 'must be a standard resource for containers'));
      try {
        const q = parseQuantity(String(v));
        if (q.mant < 0n) errs.push(invalid(fp, formatQuantity(q), 'must be greater than or equal to 0'));
        if (!isNative(name) && milliValue(q) % 1000n !== 0n)
          errs.push(invalid(fp, formatQuantity(q), 'must be an integer'));
        out.set(name, q);
      } catch {
        /* decode already rejected malformed quantities */
      }
    }
    return out;
  };
  const limPath = child(p, 'limits');
  const reqPath = child(p, 'requests');
  const limits = parse(asObj(r.limits) ?? {}, limPath);
  const requests = parse(asObj(r.requests) ?? {}, reqPath);
  for (const [name, q] of requests) {
    const lim = limits.get(name);
    if (lim) {
      const c = compareQuantity(q, lim);
      if (c !== 0 && !overcommitAllowed(name))
        errs.push(
          invalid(reqPath, formatQuantity(q), `must be equal to ${name} limit of ${formatQuantity(lim)}`),
        );
      else if (c > 0)
        errs.push(
          invalid(
            reqPath,
            formatQuantity(q),
            `must be less than or equal to ${name} limit of ${formatQuantity(lim)}`,
          ),
        );
    } else if (!overcommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
  }
  return errs;
}

function validateProbe(probe: Obj, p: string, successMustBeOne: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter((k) => isSet(probe[k]));
  if (handlers.length === 0) errs.push(required(p, 'must specify a handler type'));
  for (const extra of handlers.slice(1))
    errs.push(forbidden(child(p, extra), 'may not specify more than 1 handler type'));
  for (const f of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ])
    errs.push(...validateNonnegative(probe[f], child(p, f)));
  if (successMustBeOne && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1)
    errs.push(invalid(child(p, 'successThreshold'), probe.successThreshold, 'must be 1'));
  const http = asObj(probe.httpGet);
  if (http) errs.push(...validatePortNumOrName(http.port, child(child(p, 'httpGet'), 'port')));
  const tcp = asObj(probe.tcpSocket);
  if (tcp) errs.push(...validatePortNumOrName(tcp.port, child(child(p, 'tcpSocket'), 'port')));
  return errs;
}

function validateTolerations(tols: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(tols).forEach((x, i) => {
    const t = asObj(x) ?? {};
    const ip = index(p, i);
    const k = asStr(t.key);
    const op = asStr(t.operator);
    if (!k && op !== 'Exists')
      errs.push(
        invalid(
          child(ip, 'operator'),
          op,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    if (isSet(t.tolerationSeconds) && t.effect !== 'NoExecute')
      errs.push(
        invalid(
          child(ip, 'effect'),
          asStr(t.effect),
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    if (op === 'Exists' && asStr(t.value))
      errs.push(invalid(child(ip, 'operator'), t.value, "value must be empty when `operator` is 'Exists'"));
  });
  return errs;
}
