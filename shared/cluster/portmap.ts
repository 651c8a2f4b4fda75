// The CNI portmap plugin's shared NAT chains (CNI-HOSTPORT-DNAT, -MASQ, -SETMARK and the
// jumps to them) stay on the host after the last pod with a host port is gone: the
// plugin removes only each pod's own chain. Once no pod of any node uses a host port
// (CNI-HOSTPORT-DNAT is empty), they are removed with a stopping containerd's other
// host state, and so is a nat table that held nothing else.
import { execFileSync } from 'node:child_process';

const CHAIN = /^CNI-HOSTPORT-/;

/** iptables-save-style words of one `-S` line, its quoted comments kept whole. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

function rules(tool: string): string[][] | undefined {
  try {
    return execFileSync(tool, ['-w', '-t', 'nat', '-S'], { encoding: 'utf8', stdio: 'pipe' })
      .split('\n')
      .filter(Boolean)
      .map(words);
  } catch {
    return undefined; // no such tool or no nat table
  }
}

function run(tool: string, args: string[]): void {
  try {
    execFileSync(tool, ['-w', '-t', 'nat', ...args], { stdio: 'ignore' });
  } catch {
    // gone meanwhile
  }
}

/** Removes portmap's chains of one family when no pod uses them; then an empty nat table. */
function removeIdle(tool: string, family: 'ip' | 'ip6'): void {
  const all = rules(tool);
  if (!all) return;
  const inUse = all.some((r) => r[0] === '-A' && r[1] === 'CNI-HOSTPORT-DNAT');
  if (inUse) return;
  for (const r of all)
    if (r[0] === '-A' && !CHAIN.test(r[1]) && CHAIN.test(r.at(-1)!)) run(tool, ['-D', ...r.slice(1)]);
  const chains = all.filter((r) => r[0] === '-N' && CHAIN.test(r[1])).map((r) => r[1]);
  for (const c of chains) run(tool, ['-F', c]);
  for (const c of chains) run(tool, ['-X', c]);
  // Only the built-in chains' policies left: an empty table (portmap's own calls make it), no effect but clutter.
  if ((rules(tool) ?? []).every((r) => r[0] === '-P')) {
    try {
      execFileSync('nft', ['delete', 'table', family, 'nat'], { stdio: 'ignore' });
    } catch {
      // a legacy-iptables host, or no nft: the empty table stays
    }
  }
}

/** portmap's NAT chains removed from the host while no pod uses a host port. */
export function removeIdlePortmapChains(): void {
  removeIdle('iptables', 'ip');
  removeIdle('ip6tables', 'ip6');
}
