// Applying a rule set to the kernel: one atomic transaction per sync.
//  - nftables: one `nft -f -` transaction, all or nothing: the whole table the
//    first time and after a failure, a rewrite of everything on a full sync, and
//    otherwise a partial sync of what changed (kube-proxy's nftables mode). Chains
//    no longer used are flushed at once and deleted a sync at least
//    staleChainDelayMs later (kernels before 6.2 keep a chain referenced briefly
//    after the map element that pointed at it went).
//  - iptables: one `iptables-restore --noflush` of the proxy's own chains (stale
//    ones deleted in the same run); the jump rules from the built-in chains are
//    only ensured (-C, else -I), never rewritten.
// cleanup() removes everything the backend ever added (--cleanup, and the other
// mode's leftovers when a node changes mode).
import type { Logger } from '../shared/log';
import { mustRun, haveTool, type Runner } from './exec';
import type { RuleSet } from './model';
import {
  nftDeleteScript,
  nftPartialScript,
  nftReplaceScript,
  nftTable,
  nftUpdateScript,
  type NftTable,
} from './nftables';
import { iptJumpRules, iptablesRestoreText, type ExistingChains } from './iptables';

export type ProxyMode = 'nftables' | 'iptables';

export interface ProxyBackend {
  readonly mode: ProxyMode;
  /**
   * Programs the rule set; on a throw the kernel keeps what the previous apply put there.
   * `full`: rewrite everything, not only what changed since the previous apply.
   */
  apply(rs: RuleSet, o?: { full?: boolean }): Promise<void>;
  cleanup(): Promise<void>;
}

/** kube-proxy waits at least a second before deleting a chain it flushed. */
export const STALE_CHAIN_DELAY_MS = 1000;

export interface NftablesBackendOptions {
  staleChainDelayMs?: number;
  now?: () => number;
}

export class NftablesBackend implements ProxyBackend {
  readonly mode = 'nftables';
  private installed?: NftTable;
  /** Chains flushed (no longer used) but not yet deleted: when they were flushed. */
  private readonly stale = new Map<string, number>();
  private readonly staleDelay: number;
  private readonly now: () => number;

  constructor(
    private readonly run: Runner,
    readonly table: string,
    o: NftablesBackendOptions = {},
  ) {
    this.staleDelay = o.staleChainDelayMs ?? STALE_CHAIN_DELAY_MS;
    this.now = o.now ?? Date.now;
  }

  /** The chains flushed and waiting for their deletion. */
  get staleChains(): string[] {
    return [...this.stale.keys()];
  }

  async apply(rs: RuleSet, o: { full?: boolean } = {}): Promise<void> {
    const next = nftTable(rs, this.table);
    const now = this.now();
    const inNext = new Set(next.chains.map((c) => c.name));
    const prev = this.installed;
    const flushedNow = prev ? prev.chains.filter((c) => !inNext.has(c.name)).map((c) => c.name) : [];
    const due = [...this.stale].filter(([, at]) => now - at >= this.staleDelay).map(([name]) => name);
    if (this.staleDelay <= 0) due.push(...flushedNow);
    const partial = prev && !o.full ? nftPartialScript(prev, next, due) : undefined;
    const script =
      partial ??
      (prev
        ? nftUpdateScript(
            { ...prev, chains: [...prev.chains, ...this.staleChains.map((name) => ({ name, rules: [] }))] },
            next,
          )
        : nftReplaceScript(next));
    try {
      if (script) await mustRun(this.run, 'nft', ['-f', '-'], script);
      this.installed = next;
    } catch (err) {
      // Whatever is there now, the next apply replaces it whole.
      this.installed = undefined;
      this.stale.clear();
      throw err;
    }
    if (partial === undefined) this.stale.clear();
    else {
      const deleted = new Set(due);
      for (const name of [...this.stale.keys()])
        if (deleted.has(name) || inNext.has(name)) this.stale.delete(name);
      for (const name of flushedNow) if (!deleted.has(name)) this.stale.set(name, now);
    }
  }

  async cleanup(): Promise<void> {
    this.installed = undefined;
    this.stale.clear();
    await mustRun(this.run, 'nft', ['-f', '-'], nftDeleteScript(this.table));
  }
}

export class IptablesBackend implements ProxyBackend {
  readonly mode = 'iptables';

  constructor(
    private readonly run: Runner,
    readonly prefix: string,
  ) {}

  /** The proxy's chains in nat and filter now. */
  private async existing(): Promise<ExistingChains> {
    const chains = async (table: string) => {
      const r = await mustRun(this.run, 'iptables-save', ['-t', table]);
      const mine = `:${this.prefix}-`;
      return r.stdout
        .split('\n')
        .filter((l) => l.startsWith(mine))
        .map((l) => l.slice(1).split(' ')[0]);
    };
    return { filter: await chains('filter'), nat: await chains('nat') };
  }

  async apply(rs: RuleSet): Promise<void> {
    const text = iptablesRestoreText(rs, this.prefix, await this.existing());
    await mustRun(this.run, 'iptables-restore', ['-w', '--noflush'], text);
    for (const j of iptJumpRules(this.prefix)) {
      const present = await this.run('iptables', ['-w', '-t', j.table, '-C', j.chain, ...j.args]);
      if (present.code !== 0)
        await mustRun(this.run, 'iptables', ['-w', '-t', j.table, '-I', j.chain, '1', ...j.args]);
    }
  }

  async cleanup(): Promise<void> {
    if (!(await haveTool(this.run, 'iptables-save', ['-t', 'nat']))) return;
    for (const j of iptJumpRules(this.prefix)) {
      while ((await this.run('iptables', ['-w', '-t', j.table, '-D', j.chain, ...j.args])).code === 0);
    }
    const existing = await this.existing();
    const drop = (table: string, chains: string[]) =>
      chains.length
        ? [
            `*${table}`,
            ...chains.map((c) => `:${c} - [0:0]`),
            ...chains.map((c) => `-X ${c}`),
            'COMMIT',
          ].join('\n') + '\n'
        : '';
    const text = drop('filter', existing.filter) + drop('nat', existing.nat);
    if (text) await mustRun(this.run, 'iptables-restore', ['-w', '--noflush'], text);
  }
}

export interface BackendOptions {
  run: Runner;
  /** --proxy-mode: "" or nftables (falls back to iptables without nft), iptables. */
  mode: string;
  nftTable: string;
  iptablesPrefix: string;
  log: Logger;
}

/** `nft --version` ≥ 1.0.1, as knftables requires. */
async function nftUsable(run: Runner): Promise<boolean> {
  try {
    const r = await run('nft', ['--version']);
    const m = /v(\d+)\.(\d+)\.(\d+)/.exec(r.stdout);
    if (r.code !== 0 || !m) return false;
    const [a, b, c] = m.slice(1).map(Number);
    return a > 1 || (a === 1 && (b > 0 || c >= 1));
  } catch {
    return false;
  }
}

/** The backend of --proxy-mode; nftables falls back to iptables where nft is missing. */
export async function chooseBackend(o: BackendOptions): Promise<ProxyBackend> {
  if (o.mode !== '' && o.mode !== 'nftables' && o.mode !== 'iptables')
    throw new Error(`invalid proxy mode "${o.mode}": must be nftables or iptables`);
  if (o.mode !== 'iptables') {
    if (await nftUsable(o.run)) return new NftablesBackend(o.run, o.nftTable);
    o.log.warn('nft (nftables >= 1.0.1) not found, using the iptables proxy mode instead', {
      requested: o.mode || 'nftables',
    });
  }
  if (!(await haveTool(o.run, 'iptables-restore', ['--version'])))
    throw new Error(
      'neither nft nor iptables-restore is installed: the service proxy cannot program the kernel',
    );
  return new IptablesBackend(o.run, o.iptablesPrefix);
}

/** Both modes' leftovers (--cleanup; a crash; a change of mode). */
export async function cleanupAll(o: Omit<BackendOptions, 'mode' | 'log'>): Promise<void> {
  if (await nftUsable(o.run)) await new NftablesBackend(o.run, o.nftTable).cleanup();
  await new IptablesBackend(o.run, o.iptablesPrefix).cleanup();
}
