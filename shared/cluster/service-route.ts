// The Service CIDR made unreachable on the host (`ip route add unreachable
// <cidr>`): with no service proxy, nothing answers a ClusterIP here and the
// host would route the CIDR to its default gateway, off the machine. With the
// route, a connection to a ClusterIP fails at once with EHOSTUNREACH instead.
// Only a route of type unreachable for exactly the CIDR is ever replaced or
// removed: a route of the host's own for it is left alone.
// Once a service proxy programs the CIDR, it is routed through the first node's
// bridge instead (routeThroughBridge): an unreachable route fails the host's own
// connections at connect(), before the proxy's DNAT could see them.
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

/** Whether the CIDR is routed exactly through this bridge (routeThroughBridge's route). */
export function hasBridgeRoute(cidr: string, bridge: string): boolean {
  try {
    return ip(['route', 'show', 'exact', cidr, 'dev', bridge]).trim() !== '';
  } catch {
    return false;
  }
}

/**
 * The unreachable routes of the service CIDR replaced by routes through a node's bridge, the
 * host's connections sourced from its gateway (so they are that node's, for its proxy): the
 * proxy DNATs allocated ClusterIPs and rejects the rest; without its rules a packet reaches
 * only that bridge; the route goes with the bridge. Only CIDRs routed unreachable are changed.
 */
export function routeThroughBridge(cidrs: string[], bridge: string, source: string): string[] {
  const done: string[] = [];
  for (const cidr of cidrs) {
    if (!hasUnreachableRoute(cidr)) continue;
    try {
      ip(['route', 'replace', cidr, 'dev', bridge, 'src', source]);
      done.push(cidr);
    } catch {
      // keeps its unreachable route: ClusterIPs fail from the host, pods still reach them
    }
  }
  return done;
}

/** Back to unreachable (a stop: the proxy's rules and then the bridge go). */
export function routeUnreachableAgain(cidrs: string[], bridge: string): void {
  for (const cidr of cidrs)
    if (hasBridgeRoute(cidr, bridge))
      try {
        ip(['route', 'replace', 'unreachable', cidr]);
      } catch {
        // the bridge (and its route) went meanwhile
      }
}
