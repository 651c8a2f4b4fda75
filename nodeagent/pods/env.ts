// A container's environment as the kubelet makes it (makeEnvironmentVariables):
// envFrom ConfigMaps and Secrets (with prefix; keys that are no valid names
// skipped with an InvalidEnvironmentVariableNames event), then env in order —
// values with $(VAR) expanded against what came before and the service
// variables, configMapKeyRef, secretKeyRef, fieldRef, resourceFieldRef — and
// last the service environment variables (FOO_SERVICE_HOST ...) of the pod's
// namespace when enableServiceLinks, and always those of the kubernetes
// service. A missing object or key throws ContainerConfigError with kubelet's
// message (the container waits in CreateContainerConfigError).
import { containerResourceValue, podFieldValue, type DownwardContext } from './downward';
import { ObjectNotFound, type PodObjects } from './pod-objects';
import { compareKeys } from '../../shared/codec/protobuf-wire';

/** The container cannot be configured yet: waiting reason CreateContainerConfigError. */
export class ContainerConfigError extends Error {}

/** kubelet's expansion.Expand: $(VAR) from mapping, $$ escapes a $, unknown references stay as written. */
export function expand(input: string, mapping: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        // No closing paren: the rest is literal.
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const v = name === '' ? undefined : mapping(name);
      out += v ?? `$(${name})`;
      i = close + 1;
    } else {
      out += ch + next;
      i += 2;
    }
  }
  return out;
}

/** kubelet's ExpandContainerCommandAndArgs: $(VAR) in command and args from the container's resolved env. */
export function expandCommandAndArgs(container: any, env: { name: string; value: string }[]): any {
  if (!container.command && !container.args) return container;
  const m = new Map(env.map((e) => [e.name, e.value]));
  const map = (xs: string[] | undefined) => xs?.map((x) => expand(x, (n) => m.get(n)));
  return {
    ...container,
    ...(container.command ? { command: map(container.command) } : {}),
    ...(container.args ? { args: map(container.args) } : {}),
  };
}

/** IsEnvVarName: letters, digits, '_', '-', '.'; not starting with a digit. */
export function isEnvVarName(k: string): boolean {
  return /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(k);
}

/** The master services kubelet always exports (from the default namespace). */
const MASTER_SERVICES = new Set(['kubernetes']);

const isServiceIPSet = (s: any) => !!s.spec?.clusterIP && s.spec.clusterIP !== 'None';
const envName = (s: string) => s.toUpperCase().replace(/-/g, '_');
const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** kubelet's envvars.FromServices: FOO_SERVICE_HOST/PORT[_NAME] and the Docker-link FOO_PORT_* variables. */
export function serviceEnv(services: any[]): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const ip: string = s.spec.clusterIP;
    const prefix = envName(s.metadata.name);
    const ports: any[] = s.spec.ports ?? [];
    out.push({ name: `${prefix}_SERVICE_HOST`, value: ip });
    if (ports.length) out.push({ name: `${prefix}_SERVICE_PORT`, value: String(ports[0].port) });
    for (const p of ports)
      if (p.name) out.push({ name: `${prefix}_SERVICE_PORT_${envName(p.name)}`, value: String(p.port) });
    ports.forEach((p, i) => {
      const proto = String(p.protocol ?? 'TCP').toLowerCase();
      const url = `${proto}://${hostPort(ip, p.port)}`;
      if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
      const base = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out.push({ name: base, value: url });
      out.push({ name: `${base}_PROTO`, value: proto });
      out.push({ name: `${base}_PORT`, value: String(p.port) });
      out.push({ name: `${base}_ADDR`, value: ip });
    });
  }
  return out;
}

/** kubelet's getServiceEnvVarMap: the pod namespace's services (enableServiceLinks) and the master services. */
export function serviceEnvFor(all: any[], ns: string, enableServiceLinks: boolean): Map<string, string> {
  const byName = new Map<string, any>();
  for (const s of all) {
    if (!isServiceIPSet(s)) continue;
    const name = s.metadata.name;
    if (s.metadata.namespace === 'default' && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, s);
    } else if (s.metadata.namespace === ns && enableServiceLinks) byName.set(name, s);
  }
  const sorted = [...byName.values()].sort((a, b) => compareKeys(a.metadata.name, b.metadata.name));
  return new Map(serviceEnv(sorted).map((e) => [e.name, e.value]));
}

export interface EnvInputs extends DownwardContext {
  objects: PodObjects;
  /** The pod-level warning event (InvalidEnvironmentVariableNames). */
  warn(reason: string, message: string): void;
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

async function lookup<T>(optional: boolean, fetch: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fetch();
  } catch (err) {
    if (optional && err instanceof ObjectNotFound) return undefined;
    throw new ContainerConfigError(err instanceof Error ? err.message : String(err));
  }
}

/** The container's environment, every source resolved; throws ContainerConfigError. */
export async function resolveEnv(
  pod: any,
  container: any,
  d: EnvInputs,
): Promise<{ name: string; value: string }[]> {
  const ns: string = pod.metadata.namespace;
  const links = pod.spec?.enableServiceLinks !== false;
  let services: Map<string, string>;
  try {
    services = serviceEnvFor(await d.objects.allServices(), ns, links);
  } catch (err) {
    throw new ContainerConfigError(err instanceof Error ? err.message : String(err));
  }
  const env = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const prefix: string = from.prefix ?? '';
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const isSecret = !!from.secretRef;
    const obj = await lookup(!!ref.optional, () =>
      isSecret ? d.objects.secret(ns, ref.name) : d.objects.configMap(ns, ref.name),
    );
    if (!obj) continue;
    const invalid: string[] = [];
    for (const [k, raw] of Object.entries<string>(obj.data ?? {})) {
      const key = prefix + k;
      if (!isEnvVarName(key)) {
        invalid.push(key);
        continue;
      }
      env.set(key, isSecret ? decode(raw) : raw);
    }
    if (invalid.length)
      d.warn(
        'InvalidEnvironmentVariableNames',
        isSecret
          ? `Keys [${invalid.sort().join(', ')}] from the EnvFrom secret ${ns}/${ref.name} were skipped since they are considered invalid environment variable names.`
          : `Keys [${invalid.sort().join(', ')}] from the EnvFrom configMap ${ns}/${ref.name} were skipped since they are considered invalid environment variable names.`,
      );
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (e.value || !from) {
      env.set(
        e.name,
        expand(e.value ?? '', (n) => env.get(n) ?? services.get(n)),
      );
      continue;
    }
    try {
      if (from.fieldRef) {
        env.set(e.name, podFieldValue(pod, from.fieldRef.fieldPath, d));
      } else if (from.resourceFieldRef) {
        const ref = from.resourceFieldRef;
        const target = ref.containerName
          ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
              (c: any) => c.name === ref.containerName,
            )
          : container;
        env.set(e.name, containerResourceValue(target ?? container, ref.resource, ref.divisor, d));
      } else if (from.configMapKeyRef || from.secretKeyRef) {
        const ref = from.configMapKeyRef ?? from.secretKeyRef;
        const isSecret = !!from.secretKeyRef;
        const optional = !!ref.optional;
        const obj = await lookup(optional, () =>
          isSecret ? d.objects.secret(ns, ref.name) : d.objects.configMap(ns, ref.name),
        );
        if (!obj) continue;
        const raw = obj.data?.[ref.key];
        if (raw === undefined) {
          if (optional) continue;
          throw new ContainerConfigError(
            `couldn't find key ${ref.key} in ${isSecret ? 'Secret' : 'ConfigMap'} ${ns}/${ref.name}`,
          );
        }
        env.set(e.name, isSecret ? decode(raw) : raw);
      }
    } catch (err) {
      if (err instanceof ContainerConfigError) throw err;
      throw new ContainerConfigError(err instanceof Error ? err.message : String(err));
    }
  }
  for (const [k, v] of services) if (!env.has(k)) env.set(k, v);
  return [...env].map(([name, value]) => ({ name, value }));
}
