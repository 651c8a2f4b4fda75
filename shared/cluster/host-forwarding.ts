// What the host needs so that pods of several nodes (one bridge each, on this
// host) reach each other and Services: routing between the bridges
// (net.ipv4.ip_forward), bridged traffic through netfilter
// (net.bridge.bridge-nf-call-iptables, module br_netfilter) so that a pod
// reaching a Service whose endpoint is on its own bridge gets the reply
// un-NATed, and where iptables' FORWARD policy is DROP (docker sets it) accept
// rules for the pod CIDRs. Each change is recorded in the data dir with the
// value before it, and undone on stop and by the next start after a crash. A
// setting that already had the value is left alone (and so never undone). The
// sysctls are the host's, shared by every cluster on it: one that stops while
// others run hands what it recorded to one of them, the last one restores it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

interface Recorded {
  /** /proc/sys paths and their values before. */
  sysctls: { path: string; before: string }[];
  /** `iptables -A FORWARD` arguments added. */
  forwardRules: string[][];
}

const WANTED = ['/proc/sys/net/ipv4/ip_forward', '/proc/sys/net/bridge/bridge-nf-call-iptables'];

function quietly(file: string, args: string[]): boolean {
  try {
    execFileSync(file, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const forwardPolicyDrops = () => {
  try {
    return /^-P FORWARD DROP$/m.test(execFileSync('iptables', ['-w', '-S', 'FORWARD'], { encoding: 'utf8' }));
  } catch {
    return false; // no iptables: nothing of it can drop
  }
};

/** Enables forwarding for the pod CIDRs (as root); says what it changed, recorded in `file`. */
export function allowPodForwarding(file: string, podCIDRs: string[], tag: string): string[] {
  if (process.getuid?.() !== 0) return [];
  restoreHostSettings(file);
  const rec: Recorded = { sysctls: [], forwardRules: [] };
  const save = () => writeFileSync(file, JSON.stringify(rec, null, 2));
  if (!existsSync(WANTED[1])) quietly('modprobe', ['br_netfilter']);
  for (const path of WANTED) {
    if (!existsSync(path)) continue;
    const before = readFileSync(path, 'utf8').trim();
    if (before === '1') continue;
    rec.sysctls.push({ path, before });
    save();
    writeFileSync(path, '1');
  }
  if (forwardPolicyDrops())
    for (const cidr of podCIDRs)
      for (const dir of ['-s', '-d']) {
        const rule = ['FORWARD', dir, cidr, '-m', 'comment', '--comment', tag, '-j', 'ACCEPT'];
        rec.forwardRules.push(rule);
        save();
        quietly('iptables', ['-w', '-I', ...rule]);
      }
  return [
    ...rec.sysctls.map((s) => `${s.path.slice('/proc/sys/'.length).replace(/\//g, '.')}=1`),
    ...(rec.forwardRules.length ? [`iptables FORWARD accepts ${podCIDRs.join(', ')}`] : []),
  ];
}

/**
 * Undoes what allowPodForwarding recorded in `file` (none is fine); says what it undid. The
 * sysctls go to the first of `heirs` (the host settings files of other clusters whose pods still
 * need them) rather than back to their values before.
 */
export function restoreHostSettings(file: string, heirs: string[] = []): string | undefined {
  if (!existsSync(file)) return undefined;
  const rec = readRecorded(file);
  for (const rule of rec.forwardRules) while (quietly('iptables', ['-w', '-D', ...rule]));
  const heir = rec.sysctls.length ? heirs[0] : undefined;
  if (heir) {
    const theirs = existsSync(heir) ? readRecorded(heir) : { sysctls: [], forwardRules: [] };
    for (const s of rec.sysctls) if (!theirs.sysctls.some((t) => t.path === s.path)) theirs.sysctls.push(s);
    writeFileSync(heir, JSON.stringify(theirs, null, 2));
  } else
    for (const s of rec.sysctls)
      try {
        writeFileSync(s.path, s.before);
      } catch {
        // the module is gone: so is the setting
      }
  rmSync(file, { force: true });
  const n = rec.sysctls.length + rec.forwardRules.length;
  return n
    ? `${n} host network setting${n === 1 ? '' : 's'}${heir ? ' (the sysctls kept for a cluster still running)' : ''}`
    : undefined;
}

function readRecorded(file: string): Recorded {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Recorded;
  } catch {
    return { sysctls: [], forwardRules: [] };
  }
}
