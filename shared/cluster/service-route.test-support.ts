// Service CIDRs for tests that must never send a packet off the machine: a
// block of 198.18.0.0/15 (benchmarking, never routed on a real network) picked
// by the test process's PID, and the check that an address in it is routed
// unreachable here before anything dials it.
import { execFileSync } from 'node:child_process';

const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/** The offset-th block of 2^(32-prefix) addresses for this process, and its first host address. */
export function testServiceCIDR(prefix: number, offset = 0): { cidr: string; address: string } {
  const size = 2 ** (32 - prefix);
  const blocks = 2 ** 17 / size;
  const base = 198 * 2 ** 24 + 18 * 2 ** 16 + ((process.pid * 4 + offset) % blocks) * size;
  return { cidr: `${dotted(base)}/${prefix}`, address: dotted(base + 1) };
}

/** `ip route get` fails with "No route to host" only when the address is routed unreachable here. */
export function routedUnreachable(address: string): boolean {
  try {
    execFileSync('ip', ['route', 'get', address], { stdio: 'pipe' });
    return false;
  } catch (err) {
    return /No route to host/.test(String((err as { stderr?: Buffer }).stderr));
  }
}
