// The serviceaccount controller: every active namespace has a "default"
// ServiceAccount, created again when it is deleted.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isAlreadyExists, isForbidden, isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers, unwrapTombstone } from '../../../shared/informers';
import { cachesSynced, go, queueFor } from '../../app/controller-util';

/** The service accounts every namespace gets (kube: ServiceAccountsControllerOptions.ServiceAccounts). */
export const MANAGED_SERVICE_ACCOUNTS = ['default'];

export function startServiceAccountController(ctx: ControllerContext): void {
  const nsInformer = ctx.informers.forResource('namespaces');
  const saInformer = ctx.informers.forResource('serviceaccounts');
  const queue = queueFor<string>(ctx, 'serviceaccount');
  const sas = ctx.client.resource('serviceaccounts');

  saInformer.addEventHandler({
    onDelete(obj) {
      const sa = unwrapTombstone(obj) as KubeObject;
      if (!MANAGED_SERVICE_ACCOUNTS.includes(sa.metadata?.name ?? '')) return;
      if (sa.metadata.namespace) queue.add(sa.metadata.namespace);
    },
  });
  nsInformer.addEventHandler({
    onAdd: (ns) => queue.add(ns.metadata.name!),
    onUpdate: (_old, ns) => queue.add(ns.metadata.name!),
  });

  const sync = async (name: string): Promise<void> => {
    const ns = nsInformer.lister().get(name);
    if (!ns) return;
    // Service accounts are not created in terminating namespaces.
    if (ns.status?.phase !== 'Active') return;
    for (const sa of MANAGED_SERVICE_ACCOUNTS) {
      if (saInformer.lister().namespace(name).get(sa)) continue;
      try {
        await sas.namespace(name).create({ metadata: { name: sa } }, { signal: ctx.signal });
        ctx.log.v(2)?.info('created service account', { namespace: name, serviceAccount: sa });
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        // The namespace began terminating (or vanished) meanwhile.
        if (isForbidden(err) || isNotFound(err)) {
          const current = nsInformer.lister().get(name);
          if (!current || current.metadata.deletionTimestamp || isNotFound(err)) continue;
        }
        throw err;
      }
    }
  };

  go(ctx, 'serviceaccount controller', async () => {
    if (!(await cachesSynced(ctx, 'service account', nsInformer, saInformer))) return;
    await runWorkers(queue, sync, { workers: 1, signal: ctx.signal });
  });
}

export const serviceAccountController: ControllerDescriptor = {
  name: 'serviceaccount',
  aliases: ['serviceaccount-controller'],
  start: startServiceAccountController,
};
