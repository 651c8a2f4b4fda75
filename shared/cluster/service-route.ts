// The Service CIDR made unreachable on the host (`ip route add unreachable
// <cidr>`): with no service proxy, nothing answers a ClusterIP here and the
// host would route the CIDR to its default gateway, off the machine. With the
// route, a connection to a ClusterIP fails at once with EHOSTUNREACH instead.
// Only a route of type unreachable for exactly the CIDR is ever replaced or
// removed: a route of the host's own for it is left alone.
import { execFileSync } from 'node:child_process';

export interface RouteResult {
  /** The CIDRs now routed unreachable. */
  installed: string[];
  /** Why a CIDR was not, one line each. */
  skipped: string[];
}

const cidrsOf = (serviceCIDR: string) =>
  serviceCIDR
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);

function ip(args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Whether the main table has a route of type unreachable for exactly this CIDR. */
export function hasUnreachableRoute(cidr: string): boolean {
  try {
    return ip(['route', 'show', 'type', 'unreachable', 'exact', cidr]).trim() !== '';
  } catch {
    return false;
  }
}

/**
 * Routes each CIDR of the service CIDR (comma-separated for dual stack) unreachable,
 * replacing a stale one left by a run that crashed. Needs root; otherwise nothing is done.
 */
export function installUnreachableRoutes(serviceCIDR: string): RouteResult {
  const out: RouteResult = { installed: [], skipped: [] };
  for (const cidr of cidrsOf(serviceCIDR)) {
    if (process.getuid?.() !== 0) {
      out.skipped.push(`${cidr}: not root, no unreachable route (ClusterIPs leave this host)`);
      continue;
    }
    removeUnreachableRoutes(cidr);
    try {
      ip(['route', 'add', 'unreachable', cidr]);
      out.installed.push(cidr);
    } catch (err) {
      const why = String((err as { stderr?: string }).stderr ?? err).trim();
      out.skipped.push(`${cidr}: ip route add unreachable ${cidr} failed: ${why}`);
    }
  }
  return out;
}

/** Removes the unreachable route of each CIDR (only one of that type; none is fine). */
export function removeUnreachableRoutes(serviceCIDR: string): void {
  for (const cidr of cidrsOf(serviceCIDR)) {
    if (!hasUnreachableRoute(cidr)) continue;
    try {
      ip(['route', 'del', 'unreachable', cidr]);
    } catch {
      // gone meanwhile
    }
  }
}
