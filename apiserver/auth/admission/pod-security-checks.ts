// The Pod Security Standards checks (k8s.io/pod-security-admission/policy):
// what each baseline and restricted check finds wrong in a pod's metadata and
// spec, and which checks a level runs.
import { allContainers } from './util';

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface Violation {
  id: string;
  reason: string;
  detail: string;
}

const plural = (one: string, many: string, n: number) => (n === 1 ? one : many);
const joinQuote = (xs: string[]) => xs.map((x) => JSON.stringify(x)).join(', ');
const containerWord = (names: string[]) =>
  `${plural('container', 'containers', names.length)} ${joinQuote(names)}`;

const BASELINE_CAPS = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
]);
const RESTRICTED_VOLUME_OK = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
  'image',
]);

type Check = (meta: any, spec: any) => Violation | null;

const checks: Record<string, { level: Level; run: Check; overrides?: string }> = {
  allowPrivilegeEscalation: {
    level: 'restricted',
    run: (_m, spec) => {
      const bad = allContainers(spec)
        .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
        .map((c) => c.name);
      return bad.length
        ? {
            id: 'allowPrivilegeEscalation',
            reason: 'allowPrivilegeEscalation != false',
            detail: `${containerWord(bad)} must set securityContext.allowPrivilegeEscalation=false`,
          }
        : null;
    },
  },
  capabilities_baseline: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad: string[] = [];
      const caps = new Set<string>();
      for (const c of allContainers(spec)) {
        const added = (c.securityContext?.capabilities?.add ?? []).filter(
          (x: string) => !BASELINE_CAPS.has(x),
        );
        if (added.length) {
          bad.push(c.name);
          for (const x of added) caps.add(x);
        }
      }
      return bad.length
        ? {
            id: 'capabilities_baseline',
            reason: 'non-default capabilities',
            detail: `${containerWord(bad)} must not include ${joinQuote([...caps].sort())} in securityContext.capabilities.add`,
          }
        : null;
    },
  },
  capabilities_restricted: {
    level: 'restricted',
    overrides: 'capabilities_baseline',
    run: (_m, spec) => {
      const missingDrop: string[] = [];
      const adding: string[] = [];
      const caps = new Set<string>();
      for (const c of allContainers(spec)) {
        const cap = c.securityContext?.capabilities;
        if (!cap) {
          missingDrop.push(c.name);
          continue;
        }
        if (!(cap.drop ?? []).includes('ALL')) missingDrop.push(c.name);
        const added = (cap.add ?? []).filter((x: string) => x !== 'NET_BIND_SERVICE');
        if (added.length) {
          adding.push(c.name);
          for (const x of added) caps.add(x);
        }
      }
      const details: string[] = [];
      if (missingDrop.length)
        details.push(`${containerWord(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
      if (adding.length)
        details.push(
          `${containerWord(adding)} must not include ${joinQuote([...caps].sort())} in securityContext.capabilities.add`,
        );
      return details.length
        ? { id: 'capabilities_restricted', reason: 'unrestricted capabilities', detail: details.join('; ') }
        : null;
    },
  },
  hostNamespaces: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad = ['hostNetwork', 'hostPID', 'hostIPC']
        .filter((k) => spec?.[k] === true)
        .map((k) => `${k}=true`);
      return bad.length ? { id: 'hostNamespaces', reason: 'host namespaces', detail: bad.join(', ') } : null;
    },
  },
  hostPathVolumes: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad = (spec?.volumes ?? []).filter((v: any) => v.hostPath).map((v: any) => v.name);
      return bad.length
        ? {
            id: 'hostPathVolumes',
            reason: 'hostPath volumes',
            detail: `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)}`,
          }
        : null;
    },
  },
  hostPorts: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad: string[] = [];
      const ports: string[] = [];
      for (const c of allContainers(spec)) {
        const hp = (c.ports ?? []).filter((p: any) => p.hostPort).map((p: any) => String(p.hostPort));
        if (hp.length) {
          bad.push(c.name);
          ports.push(...hp);
        }
      }
      return bad.length
        ? {
            id: 'hostPorts',
            reason: 'hostPort',
            detail: `${containerWord(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', ports.length)} ${ports.join(', ')}`,
          }
        : null;
    },
  },
  privileged: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad = allContainers(spec)
        .filter((c) => c.securityContext?.privileged === true)
        .map((c) => c.name);
      return bad.length
        ? {
            id: 'privileged',
            reason: 'privileged',
            detail: `${containerWord(bad)} must not set securityContext.privileged=true`,
          }
        : null;
    },
  },
  procMount: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad: string[] = [];
      const values = new Set<string>();
      for (const c of allContainers(spec)) {
        const pm = c.securityContext?.procMount;
        if (pm !== undefined && pm !== 'Default') {
          bad.push(c.name);
          values.add(pm);
        }
      }
      return bad.length
        ? {
            id: 'procMount',
            reason: 'procMount',
            detail: `${containerWord(bad)} must not set securityContext.procMount to ${joinQuote([...values].sort())}`,
          }
        : null;
    },
  },
  restrictedVolumes: {
    level: 'restricted',
    overrides: 'hostPathVolumes',
    run: (_m, spec) => {
      const bad: string[] = [];
      const types = new Set<string>();
      for (const v of spec?.volumes ?? []) {
        const kinds = Object.keys(v).filter((k) => k !== 'name');
        const wrong = kinds.filter((k) => !RESTRICTED_VOLUME_OK.has(k));
        if (wrong.length) {
          bad.push(v.name);
          for (const k of wrong) types.add(k);
        }
      }
      return bad.length
        ? {
            id: 'restrictedVolumes',
            reason: 'restricted volume types',
            detail: `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${plural('uses', 'use', bad.length)} ${plural('restricted volume type', 'restricted volume types', types.size)} ${joinQuote([...types].sort())}`,
          }
        : null;
    },
  },
  runAsNonRoot: {
    level: 'restricted',
    run: (_m, spec) => {
      const podValue = spec?.securityContext?.runAsNonRoot;
      const badSetters: string[] = podValue === false ? ['pod'] : [];
      const explicit: string[] = [];
      const implicit: string[] = [];
      for (const c of allContainers(spec)) {
        const v = c.securityContext?.runAsNonRoot;
        if (v !== undefined && v !== null) {
          if (v === false) explicit.push(c.name);
        } else if (podValue !== true) implicit.push(c.name);
      }
      if (explicit.length) badSetters.push(containerWord(explicit));
      if (badSetters.length)
        return {
          id: 'runAsNonRoot',
          reason: 'runAsNonRoot != true',
          detail: `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
        };
      if (implicit.length)
        return {
          id: 'runAsNonRoot',
          reason: 'runAsNonRoot != true',
          detail: `pod or ${containerWord(implicit)} must set securityContext.runAsNonRoot=true`,
        };
      return null;
    },
  },
  runAsUser: {
    level: 'restricted',
    run: (_m, spec) => {
      const badSetters: string[] = spec?.securityContext?.runAsUser === 0 ? ['pod'] : [];
      const bad = allContainers(spec)
        .filter((c) => c.securityContext?.runAsUser === 0)
        .map((c) => c.name);
      if (bad.length) badSetters.push(containerWord(bad));
      return badSetters.length
        ? {
            id: 'runAsUser',
            reason: 'runAsUser=0',
            detail: `${badSetters.join(' and ')} must not set runAsUser=0`,
          }
        : null;
    },
  },
  seccompProfile_baseline: {
    level: 'baseline',
    run: (_m, spec) => {
      const badSetters: string[] = [];
      const values = new Set<string>();
      const podType = spec?.securityContext?.seccompProfile?.type;
      if (podType === 'Unconfined') {
        badSetters.push('pod');
        values.add(podType);
      }
      const bad: string[] = [];
      for (const c of allContainers(spec)) {
        const t = c.securityContext?.seccompProfile?.type;
        if (t === 'Unconfined') {
          bad.push(c.name);
          values.add(t);
        }
      }
      if (bad.length) badSetters.push(containerWord(bad));
      return badSetters.length
        ? {
            id: 'seccompProfile_baseline',
            reason: 'seccompProfile',
            detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote([...values].sort())}`,
          }
        : null;
    },
  },
  seccompProfile_restricted: {
    level: 'restricted',
    overrides: 'seccompProfile_baseline',
    run: (_m, spec) => {
      const valid = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
      const badSetters: string[] = [];
      const values = new Set<string>();
      const podType = spec?.securityContext?.seccompProfile?.type;
      const podOK = valid(podType);
      if (podType !== undefined && !podOK) {
        badSetters.push('pod');
        values.add(podType);
      }
      const explicit: string[] = [];
      const implicit: string[] = [];
      for (const c of allContainers(spec)) {
        const t = c.securityContext?.seccompProfile?.type;
        if (t !== undefined) {
          if (!valid(t)) {
            explicit.push(c.name);
            values.add(t);
          }
        } else if (!podOK) implicit.push(c.name);
      }
      if (explicit.length) badSetters.push(containerWord(explicit));
      if (badSetters.length)
        return {
          id: 'seccompProfile_restricted',
          reason: 'seccompProfile',
          detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote([...values].sort())}`,
        };
      if (implicit.length)
        return {
          id: 'seccompProfile_restricted',
          reason: 'seccompProfile',
          detail: `pod or ${containerWord(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
        };
      return null;
    },
  },
  sysctls: {
    level: 'baseline',
    run: (_m, spec) => {
      const bad = (spec?.securityContext?.sysctls ?? [])
        .map((s: any) => s.name)
        .filter((n: string) => !SAFE_SYSCTLS.has(n));
      return bad.length ? { id: 'sysctls', reason: 'forbidden sysctls', detail: bad.join(', ') } : null;
    },
  },
};

const CHECK_IDS = Object.keys(checks).sort();

export function evaluate(level: Level, meta: any, spec: any): Violation[] {
  if (level === 'privileged') return [];
  const ids = CHECK_IDS.filter((id) => level === 'restricted' || checks[id].level === 'baseline');
  const overridden = new Set(ids.map((id) => checks[id].overrides).filter((x): x is string => !!x));
  const out: Violation[] = [];
  for (const id of ids) {
    if (overridden.has(id)) continue;
    const v = checks[id].run(meta, spec);
    if (v) out.push(v);
  }
  return out;
}
