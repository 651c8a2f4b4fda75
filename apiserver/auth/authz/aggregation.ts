// ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation
// controller does it: a ClusterRole with an aggregationRule gets the union of
// the rules of every ClusterRole its selectors match (by name order, without
// duplicates), rewritten whenever any ClusterRole changes.
import { isStatusError } from '../../../shared/api/status';
import { selectorMatches, type LabelSelectorObject } from '../../../shared/api/labels';
import { logger } from '../../../shared/log';
import { systemContext } from '../../registry/context';
import type { Registry } from '../../registry/registry';
import type { RBACIndex } from './rbac';
import { RBAC_GROUP } from './rbac';
import type { PolicyRule } from './rules';

const log = logger('auth/rbac-aggregation');

/** A rule without empty lists, for comparisons. */
function normalize(r: PolicyRule): string {
  const out: Record<string, string[]> = {};
  for (const k of ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
    const v = r[k];
    if (v && v.length) out[k] = v;
  }
  return JSON.stringify(out);
}

/** The rules an aggregated role should have, from the current ClusterRoles. */
export function aggregatedRules(role: any, all: Iterable<any>): PolicyRule[] {
  const sorted = [...all].sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const sel of (role.aggregationRule?.clusterRoleSelectors ?? []) as LabelSelectorObject[]) {
    for (const cr of sorted) {
      if (cr.metadata.name === role.metadata.name) continue;
      if (!selectorMatches(sel, cr.metadata.labels)) continue;
      for (const r of (cr.rules ?? []) as PolicyRule[]) {
        const k = normalize(r);
        if (seen.has(k)) continue;
        seen.add(k);
        rules.push(r);
      }
    }
  }
  return rules;
}

const sameRules = (a: PolicyRule[] | undefined, b: PolicyRule[] | undefined) => {
  const x = (a ?? []).map(normalize);
  const y = (b ?? []).map(normalize);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

export class AggregationController {
  private scheduled = false;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly registry: () => Registry,
    private readonly index: RBACIndex,
  ) {}

  async start(): Promise<void> {
    await this.index.start();
    this.index.clusterRoles.onChange(() => this.schedule());
    await this.sync();
  }

  stop(): void {
    this.stopped = true;
  }

  private schedule(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.sync();
    });
  }

  /** Brings every aggregated ClusterRole up to date (one pass at a time). */
  async sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<void> {
    const all = [...this.index.clusterRoles.items.values()];
    const served = this.registry().preferred(RBAC_GROUP, 'clusterroles');
    if (!served) return;
    for (const role of all) {
      if (this.stopped) return;
      if (!role.aggregationRule) continue;
      const want = aggregatedRules(role, all);
      if (sameRules(want, role.rules)) continue;
      try {
        await served.store.update(
          systemContext('', 'clusterrole-aggregation-controller'),
          role.metadata.name,
          (cur) => {
            if (!cur?.aggregationRule) return cur;
            return { ...cur, rules: aggregatedRules(cur, this.index.clusterRoles.items.values()) };
          },
          {},
          { allowCreate: false },
        );
      } catch (err) {
        if (!isStatusError(err, 'NotFound'))
          log.warn('aggregating cluster role failed', { role: role.metadata.name, err: String(err) });
      }
    }
  }
}
