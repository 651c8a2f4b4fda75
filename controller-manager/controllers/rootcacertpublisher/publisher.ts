// The root-ca-cert-publisher: a ConfigMap "kube-root-ca.crt" holding the CA
// bundle that verifies the apiserver (--root-ca-file, else the CA of the
// manager's kubeconfig) in every namespace, put back when changed or deleted.
import { readFileSync } from 'node:fs';
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isAlreadyExists, isForbidden, isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers, unwrapTombstone } from '../../../shared/informers';
import { cachesSynced, go, queueFor } from '../../app/controller-util';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b).length && ka.every((k) => a![k] === b[k]);
}

export function startRootCACertPublisher(ctx: ControllerContext): void {
  const rootCA: string | undefined = ctx.options.rootCaFile
    ? readFileSync(ctx.options.rootCaFile, 'utf8')
    : ctx.client.config.caPem;
  if (!rootCA) {
    ctx.log.error(
      'not starting root-ca-cert-publisher: no --root-ca-file and no CA data in the client configuration',
    );
    return;
  }
  const nsInformer = ctx.informers.forResource('namespaces');
  const cmInformer = ctx.informers.forResource('configmaps');
  const configMaps = ctx.client.resource('configmaps');
  const queue = queueFor<string>(ctx, 'root_ca_cert_publisher');

  const cmChanged = (obj: KubeObject) => {
    if (obj.metadata?.name === ROOT_CA_CONFIGMAP && obj.metadata.namespace) queue.add(obj.metadata.namespace);
  };
  cmInformer.addEventHandler({
    onUpdate: (_old, cm) => cmChanged(cm),
    onDelete: (obj) => cmChanged(unwrapTombstone(obj)),
  });
  nsInformer.addEventHandler({
    onAdd: (ns) => queue.add(ns.metadata.name!),
    onUpdate: (_old, ns) => queue.add(ns.metadata.name!),
  });

  const data = { 'ca.crt': rootCA };
  const sync = async (ns: string): Promise<void> => {
    const namespace = nsInformer.lister().get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp) return;
    const cm = cmInformer.lister().namespace(ns).get(ROOT_CA_CONFIGMAP);
    if (!cm) {
      try {
        await configMaps.namespace(ns).create(
          {
            metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
            data,
          },
          { signal: ctx.signal },
        );
      } catch (err) {
        // Not retried when the namespace is gone or terminating.
        if (isNotFound(err) || isAlreadyExists(err) || isForbidden(err)) return;
        throw err;
      }
      return;
    }
    if (sameData(cm.data, data) && cm.metadata.annotations?.[DESCRIPTION_ANNOTATION]) return;
    await configMaps.namespace(ns).update(
      {
        ...cm,
        metadata: {
          ...cm.metadata,
          annotations: { ...cm.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION },
        },
        data,
      },
      { signal: ctx.signal },
    );
  };

  go(ctx, 'root-ca-cert-publisher', async () => {
    if (!(await cachesSynced(ctx, 'crt configmap', nsInformer, cmInformer))) return;
    await runWorkers(queue, sync, { workers: 1, signal: ctx.signal });
  });
}

export const rootCACertPublisher: ControllerDescriptor = {
  name: 'root-ca-cert-publisher',
  aliases: ['root-ca-certificate-publisher-controller'],
  start: startRootCACertPublisher,
};
