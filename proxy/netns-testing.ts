// Network namespaces for the proxy's kernel tests: named
// tkube-proxy-test-<pid>-<tag> so that a later run removes those a killed run
// left (its pid is gone); everything inside (veths, tables) goes with them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { commandRunner, type Runner } from './exec';

const PREFIX = 'tkube-proxy-test-';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Can this process make namespaces and program them (root, iproute2)? */
export function netnsAvailable(): boolean {
  try {
    return process.getuid?.() === 0 && ip('netns', 'list') !== undefined;
  } catch {
    return false;
  }
}

/** Does `cmd --version` run (is the tool the test needs installed)? */
export function commandAvailable(cmd: string): boolean {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Deletes the namespaces of test runs that are no longer running. */
export function removeStaleNamespaces(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0];
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (pid && pid !== process.pid && !alive(pid)) ip('netns', 'delete', name);
  }
}

export class Netns {
  private constructor(readonly name: string) {}

  static create(tag: string): Netns {
    const ns = new Netns(`${PREFIX}${process.pid}-${tag}`);
    ip('netns', 'add', ns.name);
    ns.sh('ip', 'link', 'set', 'lo', 'up');
    return ns;
  }

  /** Runs a command inside, synchronously; throws with its stderr on failure. */
  sh(cmd: string, ...args: string[]): string {
    return ip('netns', 'exec', this.name, cmd, ...args);
  }

  /** A Runner for the proxy's backends, inside this namespace. */
  runner(): Runner {
    return commandRunner(['ip', 'netns', 'exec', this.name]);
  }

  /** Starts a long-running process inside (stop it by PID: kill()). */
  spawn(cmd: string, args: string[]): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.name, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  delete(): void {
    try {
      ip('netns', 'delete', this.name);
    } catch {
      // already gone
    }
  }
}

type NftObject = Record<string, Record<string, unknown>>;

/**
 * An nft table as installed, independent of how it got there: `nft -j list table` without the
 * handles, chains and sets by name, set elements sorted (the kernel lists them in hash order),
 * each chain's rules in their order. Two tables that route the same are equal strings.
 */
export function nftTableContents(ns: Netns, table: string, family = 'ip'): string {
  const objects = (
    JSON.parse(ns.sh('nft', '-j', 'list', 'table', family, table)) as { nftables: NftObject[] }
  ).nftables;
  const strip = (o: Record<string, unknown>) => {
    const { handle: _h, ...rest } = o;
    return rest;
  };
  const chains: string[] = [];
  const sets: string[] = [];
  const rules = new Map<string, string[]>();
  for (const obj of objects) {
    const [kind, body] = Object.entries(obj)[0];
    if (kind === 'chain') chains.push(JSON.stringify(strip(body)));
    else if (kind === 'set' || kind === 'map') {
      const elem = ((body.elem as unknown[]) ?? []).map((e) => JSON.stringify(e)).sort();
      sets.push(JSON.stringify({ kind, ...strip(body), elem }));
    } else if (kind === 'rule') {
      const chain = String(body.chain);
      rules.set(chain, [...(rules.get(chain) ?? []), JSON.stringify(body.expr)]);
    }
  }
  const ruleLines = [...rules].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, r]) => `${c}: ${r.join(' ; ')}`);
  return [...chains.sort(), ...sets.sort(), ...ruleLines].join('\n');
}

/** A veth pair between two namespaces, addressed a/b on one /24 (b's default route via a). */
export function linkNamespaces(a: Netns, aAddr: string, b: Netns, bAddrs: string[], dev = 'veth0'): void {
  a.sh('ip', 'link', 'add', dev, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', b.name);
  a.sh('ip', 'addr', 'add', `${aAddr}/24`, 'dev', dev);
  a.sh('ip', 'link', 'set', dev, 'up');
  for (const addr of bAddrs) b.sh('ip', 'addr', 'add', `${addr}/24`, 'dev', 'eth0');
  b.sh('ip', 'link', 'set', 'eth0', 'up');
  b.sh('ip', 'route', 'add', 'default', 'via', aAddr);
}

/**
 * A TCP client run inside a namespace: connects, reads what the server says.
 * "refused" for ECONNREFUSED, "timeout" when nothing answers within timeoutMs; from
 * localAddress when given.
 */
export async function tcpProbe(
  ns: Netns,
  host: string,
  port: number,
  timeoutMs = 3000,
  localAddress?: string,
): Promise<string> {
  const local = localAddress ? `, localAddress: ${JSON.stringify(localAddress)}` : '';
  const script = `
    const s = require('net').connect({ host: ${JSON.stringify(host)}, port: ${port}${local} });
    let data = '';
    const t = setTimeout(() => { console.log('timeout'); process.exit(0); }, ${timeoutMs});
    s.on('data', (d) => (data += d));
    s.on('end', () => { clearTimeout(t); console.log(data); process.exit(0); });
    s.on('error', (e) => { clearTimeout(t); console.log(e.code === 'ECONNREFUSED' ? 'refused' : e.code); process.exit(0); });`;
  const child = ns.spawn(process.execPath, ['-e', script]);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  await new Promise((r) => child.on('close', r));
  return out.trim();
}

/** A TCP server inside a namespace on host:port that says `host` to each client and closes. */
export async function tcpEcho(ns: Netns, host: string, port: number): Promise<ChildProcess> {
  const script = `
    require('net').createServer((c) => c.end(${JSON.stringify(host)}))
      .listen(${port}, ${JSON.stringify(host)}, () => console.log('listening'));`;
  const child = ns.spawn(process.execPath, ['-e', script]);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`echo server on ${host}:${port} exited ${code}`)));
  });
  return child;
}

/** Stops a process started by spawn() by its PID and waits for it. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}
