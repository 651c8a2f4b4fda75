// Local APIServices, as kube-apiserver's autoregister and crd-registration
// controllers keep them: one per served built-in group/version (label
// automanaged=onstart: removed at start-up when its group/version is no longer
// served, e.g. turned off with --runtime-config) and one per served custom
// resource group/version (automanaged=true: removed as soon as it is gone).
// An APIService without the label is the user's and left alone. The local
// availability controller's status: Available=True, reason Local.
import { logger } from '../../shared/log';
import { isStatusError } from '../../shared/api/status';
import { systemContext } from '../registry/context';
import { rfc3339 } from '../../shared/api/validation/gotime';
import { jsonEqual } from '../../shared/api/json-value';
import type { Registry } from '../registry/registry';
import type { SubresourceStrategy } from '../registry/strategy';
import { builtinPriority, CRD_PRIORITY, type APIServicePriority } from './priorities';
import { CoalescedRuns } from './coalesced';

const log = logger('autoregister');

export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';
export const APISERVICE_GROUP = 'apiregistration.k8s.io';

interface Desired {
  group: string;
  version: string;
  priority: APIServicePriority;
  managed: 'onstart' | 'true';
}

export const apiServiceName = (group: string, version: string) => `${version}.${group}`;

/** What is served now, as APIServices: built-ins from the priority table, custom resources at CRD priority. */
export function desiredLocal(registry: Registry): Map<string, Desired> {
  const out = new Map<string, Desired>();
  for (const s of registry.all()) {
    const { group, version, resource } = s.info;
    const name = apiServiceName(group, version);
    if (out.has(name)) continue;
    if (registry.isDynamic(group, version, resource))
      out.set(name, { group, version, priority: CRD_PRIORITY, managed: 'true' });
    else {
      const priority = builtinPriority(group, version);
      if (priority) out.set(name, { group, version, priority, managed: 'onstart' });
    }
  }
  return out;
}

/** Status writes of the controllers: only status changes. */
export const STATUS_WRITE: SubresourceStrategy = {
  trusted: true,
  merge(incoming, old) {
    return {
      ...old,
      status: incoming.status,
      metadata: { ...old.metadata, resourceVersion: incoming.metadata?.resourceVersion },
    };
  },
};

/** Sets the Available condition; its lastTransitionTime moves only when status changes (SetAPIServiceCondition). */
export function withAvailable(
  obj: any,
  cond: { status: string; reason: string; message: string },
  now: Date,
): any {
  const conditions: any[] = [...(obj.status?.conditions ?? [])];
  const i = conditions.findIndex((c) => c.type === 'Available');
  const prev = i >= 0 ? conditions[i] : undefined;
  const next = {
    type: 'Available',
    status: cond.status,
    lastTransitionTime: prev && prev.status === cond.status ? prev.lastTransitionTime : rfc3339(now),
    reason: cond.reason,
    message: cond.message,
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
  return { ...obj, status: { ...(obj.status ?? {}), conditions } };
}

export const LOCAL_AVAILABLE = {
  status: 'True',
  reason: 'Local',
  message: 'Local APIServices are always available',
};

/** Already what ensure() would make it (or the user's own): nothing to write. */
function upToDate(obj: any, d: Desired): boolean {
  if (!obj) return false;
  const managed = obj.metadata?.labels?.[AUTOMANAGED_LABEL];
  if (!managed) return true;
  const s = obj.spec ?? {};
  const cond = (obj.status?.conditions ?? []).find((c: any) => c.type === 'Available');
  return (
    managed === d.managed &&
    s.group === d.group &&
    s.version === d.version &&
    s.groupPriorityMinimum === d.priority.group &&
    s.versionPriority === d.priority.version &&
    !s.service &&
    cond?.status === 'True' &&
    cond.reason === 'Local'
  );
}

export class LocalAPIServices {
  private readonly runs = new CoalescedRuns(
    () => this.sync(),
    (err) => log.warn('sync failed', { err: String(err) }),
  );
  private startedOnce = false;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly registry: Registry,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private store() {
    return this.registry.preferred(APISERVICE_GROUP, 'apiservices')?.store;
  }

  /** The first sync (removes what start-up no longer serves), then one per change of served resources. */
  async start(): Promise<void> {
    this.unsubscribe = this.registry.onChange(() => this.enqueue());
    await this.sync();
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Schedules a sync (one at a time; a request during one runs another after it). */
  enqueue(): void {
    this.runs.request();
  }

  /**
   * The built-in APIServices not yet seen Available since start (the
   * autoregister-completion health check waits for none to be left).
   */
  pending(): string[] {
    if (this.startedOnce) return [];
    return [...desiredLocal(this.registry)]
      .filter(([, d]) => d.managed === 'onstart')
      .map(([name]) => name)
      .sort();
  }

  /** Makes the stored local APIServices what is served, and marks them Available (reason Local). */
  async sync(): Promise<void> {
    const store = this.store();
    if (!store) return;
    const onStart = !this.startedOnce;
    const desired = desiredLocal(this.registry);
    const ctx = systemContext();
    const existing = await store.reader.list(ctx, {});
    // All at once: concurrent writes share the store's commits (~25 APIServices, two writes
    // each, on an empty store: one after another they were most of the way to ready).
    const stale = existing.items.filter(({ obj }) => {
      const managed = obj.metadata?.labels?.[AUTOMANAGED_LABEL];
      if (desired.has(obj.metadata.name) || !managed) return false;
      return managed === 'true' || (managed === 'onstart' && onStart);
    });
    const current = new Map(existing.items.map((i) => [i.obj.metadata.name as string, i.obj]));
    await Promise.all([
      ...stale.map(({ obj }) =>
        store.delete(ctx, obj.metadata.name).catch((err) => {
          if (!isStatusError(err, 'NotFound')) throw err;
        }),
      ),
      ...[...desired]
        .filter(([name, d]) => !upToDate(current.get(name), d))
        .map(([name, d]) => this.ensure(name, d)),
    ]);
    this.startedOnce = true;
  }

  private async ensure(name: string, d: Desired): Promise<void> {
    const store = this.store()!;
    const ctx = systemContext();
    const spec = {
      group: d.group,
      version: d.version,
      groupPriorityMinimum: d.priority.group,
      versionPriority: d.priority.version,
    };
    const { obj } = await store.update(
      ctx,
      name,
      (cur) => {
        if (cur && !cur.metadata?.labels?.[AUTOMANAGED_LABEL]) return cur; // the user's own
        const next = {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          ...(cur ?? {}),
          metadata: {
            ...(cur?.metadata ?? {}),
            name,
            labels: { ...(cur?.metadata?.labels ?? {}), [AUTOMANAGED_LABEL]: d.managed },
          },
          spec,
        };
        return cur && jsonEqual(cur.metadata, next.metadata) && jsonEqual(cur.spec, spec) ? cur : next;
      },
      {},
      { allowCreate: true },
    );
    if (obj.spec?.service) return;
    const cond = (obj.status?.conditions ?? []).find((c: any) => c.type === 'Available');
    if (cond?.status === 'True' && cond.reason === 'Local') return;
    await store
      .update(
        ctx,
        name,
        (cur) => cur && withAvailable(cur, LOCAL_AVAILABLE, this.now()),
        {},
        { sub: STATUS_WRITE },
      )
      .catch((err) => {
        if (!isStatusError(err, 'NotFound') && !isStatusError(err, 'Conflict')) throw err;
      });
  }
}
