// Pods: status on create (Pending + QoS class), graceful deletion honouring
// terminationGracePeriodSeconds, and the binding and eviction subresources.
import { badRequest, conflict, notFound, StatusError } from '../../../shared/api/status';
import { selectorMatches } from '../../../shared/api/labels';
import { qosClass } from '../../../shared/api/pod-resources';
import type { ResourceBehaviour, Registry, ServedResource } from '../registry';
import { systemContext, type RequestContext } from '../context';
import { rfc3339 } from '../../../shared/api/validation/gotime';
import { wholeObject } from '../strategy';

export function podBehaviour(registry: () => Registry): ResourceBehaviour {
  return {
    strategy: {
      returnDeletedObject: true,
      prepareForCreate(pod) {
        pod.status = { phase: 'Pending', qosClass: qosClass(pod) };
      },
      gracePeriod(pod, requested) {
        if (!pod.spec?.nodeName) return 0;
        const phase = pod.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') return 0;
        return requested ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      },
    },
    subresources: {
      binding: { custom: { create: (ctx, name, body, served) => bind(ctx, name, body, served) } },
      eviction: {
        custom: { create: (ctx, name, body, served) => evict(ctx, name, body, served, registry()) },
      },
      ephemeralcontainers: {
        strategy: {
          merge: (incoming, old) => ({
            ...old,
            spec: { ...old.spec, ephemeralContainers: incoming.spec?.ephemeralContainers },
          }),
        },
      },
      resize: {
        strategy: {
          merge: (incoming, old) => ({
            ...old,
            spec: {
              ...old.spec,
              containers: (old.spec?.containers ?? []).map((c: any) => {
                const n = (incoming.spec?.containers ?? []).find((x: any) => x.name === c.name);
                return n ? { ...c, resources: n.resources } : c;
              }),
            },
          }),
        },
      },
    },
  };
}

/** pods/binding: assign a node to an unbound pod (the scheduler's write). */
export async function bind(
  ctx: RequestContext,
  name: string,
  binding: any,
  served: ServedResource,
): Promise<{ obj: any; status: number }> {
  const target = binding.target ?? {};
  if (!target.name) throw badRequest('Binding.target.name is required');
  if (target.kind && target.kind !== 'Node') throw badRequest('Binding.target.kind must be Node');
  const gr = { group: '', resource: 'pods' };
  await served.store.update(
    ctx,
    binding.metadata?.name ?? name,
    (pod) => {
      if (!pod) throw notFound(gr, name);
      if (pod.metadata.deletionTimestamp)
        throw conflict(gr, name, 'pod is being deleted, cannot be assigned to a host');
      if (pod.spec?.nodeName)
        throw conflict(gr, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
      if (binding.metadata?.uid && binding.metadata.uid !== pod.metadata.uid)
        throw conflict(gr, name, 'uid mismatch');
      pod.spec.nodeName = target.name;
      const conditions = (pod.status.conditions ?? []).filter((c: any) => c.type !== 'PodScheduled');
      conditions.push({
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: rfc3339(ctx.now()),
      });
      pod.status = { ...pod.status, conditions };
      if (binding.metadata?.annotations)
        pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...binding.metadata.annotations };
      return pod;
    },
    {},
    { sub: wholeObject },
  );
  return {
    obj: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    status: 201,
  };
}

/** pods/eviction: delete a pod unless a PodDisruptionBudget forbids it (429). */
async function evict(
  ctx: RequestContext,
  name: string,
  eviction: any,
  served: ServedResource,
  registry: Registry,
): Promise<{ obj: any; status: number }> {
  const pod = (await served.store.reader.get(ctx, name)).obj;
  const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  if (!terminal && !pod.metadata.deletionTimestamp) {
    const pdbs = registry.preferred('policy', 'poddisruptionbudgets');
    if (pdbs) {
      const list = await pdbs.store.reader.list(systemContext(ctx.namespace), {});
      const matching = list.items
        .map((o) => o.obj)
        .filter((p) => selectorMatches(p.spec?.selector, pod.metadata.labels));
      if (matching.length > 1) {
        throw new StatusError(
          500,
          'InternalError',
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        );
      }
      const pdb = matching[0];
      if (pdb) {
        if (
          (pdb.status?.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0) ||
          (pdb.status?.disruptionsAllowed ?? 0) <= 0
        ) {
          // No Retry-After, like Kubernetes: the caller decides whether to try again.
          throw new StatusError(
            429,
            'TooManyRequests',
            "Cannot evict pod as it would violate the pod's disruption budget.",
            {
              causes: [
                {
                  reason: 'DisruptionBudget',
                  message: `The disruption budget ${pdb.metadata.name} needs ${pdb.status?.desiredHealthy ?? 0} healthy pods and has ${pdb.status?.currentHealthy ?? 0} currently`,
                },
              ],
            },
          );
        }
        await pdbs.store.update(
          systemContext(ctx.namespace),
          pdb.metadata.name,
          (cur) => {
            if (!cur) return cur;
            cur.status = {
              ...cur.status,
              disruptionsAllowed: Math.max(0, (cur.status?.disruptionsAllowed ?? 0) - 1),
            };
            cur.status.disruptedPods = { ...(cur.status.disruptedPods ?? {}), [name]: rfc3339(ctx.now()) };
            return cur;
          },
          {},
          { sub: { merge: (incoming, old) => ({ ...old, status: incoming.status }) } },
        );
      }
    }
  }
  const opts = eviction.deleteOptions ?? {};
  await served.store.delete(ctx, name, {
    gracePeriodSeconds: opts.gracePeriodSeconds ?? undefined,
    preconditions: opts.preconditions,
    propagationPolicy: opts.propagationPolicy,
  });
  return {
    obj: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    status: 201,
  };
}
