// A pod's CRI PodSandboxConfig, as kubelet's generatePodSandboxConfig builds
// it: metadata, hostname, DNS, port mappings, the pod cgroup under its QoS
// class, namespaces (host network/PID/IPC, shared process namespace), the pod
// security context and sysctls.
import { qosClass } from '../../shared/api/pod-resources';
import type { ResolverConfig } from '../pods/dns';
import { podHostnameAndDomain } from '../pods/etc-hosts';
import { ANNOTATION, sandboxLabels } from './labels';

export interface PodConfigOptions {
  /** --cgroup-root (the pods' cgroups go under <root>/kubepods). */
  cgroupRoot: string;
}

/** kubelet's pod cgroup (cgroupfs driver): /kubepods[/burstable|/besteffort]/pod<uid> under the cgroup root. */
export function podCgroupParent(pod: any, cgroupRoot: string): string {
  const qos = qosClass(pod);
  const tier = qos === 'Guaranteed' ? '' : `/${qos.toLowerCase()}`;
  const root = cgroupRoot.replace(/\/+$/, '');
  return `${root}/kubepods${tier}/pod${pod.metadata.uid}`;
}

/** The sandbox's hostname: the pod's (etc-hosts.ts); empty on the host network, which keeps the node's. */
function podHostname(pod: any): string {
  return pod.spec?.hostNetwork ? '' : podHostnameAndDomain(pod, undefined)[0];
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

/** dns: the pod's resolver configuration (pods/dns.ts); empty, the runtime copies the host's resolv.conf. */
export function podSandboxConfig(
  pod: any,
  attempt: number,
  logDirectory: string,
  o: PodConfigOptions,
  dns: ResolverConfig,
): any {
  const md = pod.metadata;
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
