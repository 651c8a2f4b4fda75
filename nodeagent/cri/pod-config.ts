// A pod's CRI PodSandboxConfig, as kubelet's generatePodSandboxConfig builds
// it: metadata, hostname, DNS, port mappings, the pod cgroup under its QoS
// class, namespaces (host network/PID/IPC, shared process namespace), the pod
// security context and sysctls.
import { readFileSync } from 'node:fs';
import { qosClass } from '../../shared/api/pod-resources';
import { ANNOTATION, sandboxLabels } from './labels';

export interface PodConfigOptions {
  /** --cgroup-root (the pods' cgroups go under <root>/kubepods). */
  cgroupRoot: string;
  /** --cluster-dns, --cluster-domain, --resolv-conf. */
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
}

/** kubelet's pod cgroup (cgroupfs driver): /kubepods[/burstable|/besteffort]/pod<uid> under the cgroup root. */
export function podCgroupParent(pod: any, cgroupRoot: string): string {
  const qos = qosClass(pod);
  const tier = qos === 'Guaranteed' ? '' : `/${qos.toLowerCase()}`;
  const root = cgroupRoot.replace(/\/+$/, '');
  return `${root}/kubepods${tier}/pod${pod.metadata.uid}`;
}

/** nameserver/search/options of a resolv.conf. */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const out = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0]);
    else if (key === 'search') out.searches = rest;
    else if (key === 'options') out.options.push(...rest);
  }
  return out;
}

function hostResolv(path: string): { servers: string[]; searches: string[]; options: string[] } {
  if (!path) return { servers: [], searches: [], options: [] };
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

/**
 * kubelet's GetPodDNS: ClusterFirst uses the cluster DNS (and falls back to the host's
 * resolv.conf when none is configured, as kubelet does with its MissingClusterDNS event),
 * Default the host's, None only the pod's dnsConfig, which is merged in every case.
 */
export function podDNS(
  pod: any,
  o: PodConfigOptions,
): { servers: string[]; searches: string[]; options: string[] } {
  let policy: string = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'ClusterFirstWithHostNet') policy = 'ClusterFirst';
  else if (policy === 'ClusterFirst' && pod.spec?.hostNetwork) policy = 'Default';
  let dns = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  if (policy === 'ClusterFirst' && o.clusterDNS.length) {
    const ns = pod.metadata.namespace;
    const d = o.clusterDomain;
    const host = hostResolv(o.resolvConf);
    dns = {
      servers: [...o.clusterDNS],
      searches: [`${ns}.svc.${d}`, `svc.${d}`, d, ...host.searches],
      options: ['ndots:5'],
    };
  } else if (policy !== 'None') dns = hostResolv(o.resolvConf);
  const extra = pod.spec?.dnsConfig;
  if (extra) {
    for (const s of extra.nameservers ?? []) if (!dns.servers.includes(s)) dns.servers.push(s);
    for (const s of extra.searches ?? []) if (!dns.searches.includes(s)) dns.searches.push(s);
    for (const o2 of extra.options ?? []) {
      const opt = o2.value !== undefined ? `${o2.name}:${o2.value}` : o2.name;
      dns.options = dns.options.filter((x) => x.split(':')[0] !== o2.name);
      dns.options.push(opt);
    }
  }
  return { servers: dns.servers.slice(0, 3), searches: dns.searches.slice(0, 32), options: dns.options };
}

/** kubelet's GeneratePodHostNameAndDomain: spec.hostname or the pod name, cut to 63 characters. */
export function podHostname(pod: any): string {
  if (pod.spec?.hostNetwork) return ''; // the sandbox keeps the node's (the CRI wants it empty)
  let name: string = pod.spec?.hostname || pod.metadata.name;
  if (name.length > 63) name = name.slice(0, 63).replace(/[-.]+$/, '');
  return name;
}

function portMappings(pod: any): any[] {
  const out: any[] = [];
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({
        protocol: p.protocol ?? 'TCP',
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        hostIp: p.hostIP ?? '',
      });
    }
  return out;
}

/** The pod-level LinuxSandboxSecurityContext (namespaces, user, groups, seccomp). */
function sandboxSecurityContext(pod: any): any {
  const spec = pod.spec ?? {};
  const sc = spec.securityContext ?? {};
  const out: any = {
    namespaceOptions: {
      network: spec.hostNetwork ? 'NODE' : 'POD',
      pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
      ipc: spec.hostIPC ? 'NODE' : 'POD',
    },
    privileged: (spec.containers ?? []).some((c: any) => c.securityContext?.privileged),
  };
  if (sc.runAsUser !== undefined) out.runAsUser = { value: sc.runAsUser };
  if (sc.runAsGroup !== undefined) out.runAsGroup = { value: sc.runAsGroup };
  const groups = [...(sc.supplementalGroups ?? [])];
  if (sc.fsGroup !== undefined) groups.unshift(sc.fsGroup);
  if (groups.length) out.supplementalGroups = groups;
  return out;
}

export function podSandboxConfig(pod: any, attempt: number, logDirectory: string, o: PodConfigOptions): any {
  const md = pod.metadata;
  const dns = podDNS(pod, o);
  return {
    metadata: { name: md.name, namespace: md.namespace, uid: md.uid, attempt },
    hostname: podHostname(pod),
    logDirectory,
    dnsConfig: { servers: dns.servers, searches: dns.searches, options: dns.options },
    portMappings: portMappings(pod),
    labels: sandboxLabels(pod),
    annotations: {
      ...(md.annotations ?? {}),
      [ANNOTATION.gracePeriod]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
    },
    linux: {
      cgroupParent: podCgroupParent(pod, o.cgroupRoot),
      securityContext: sandboxSecurityContext(pod),
      sysctls: Object.fromEntries(
        (pod.spec?.securityContext?.sysctls ?? []).map((s: any) => [s.name, String(s.value)]),
      ),
    },
  };
}
