// kube-controller-manager's ValidatingAdmissionPolicy status controller: each
// policy whose metadata.generation is newer than status.observedGeneration is
// type-checked (shared/cel/policy-typecheck) against the kinds its
// matchConstraints select, and status.observedGeneration and
// status.typeChecking.expressionWarnings are written by a forced server-side
// apply of the status subresource, as field manager
// "validatingadmissionpolicy-status". The warnings never change how the
// policy is enforced.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import type { KubeObject } from '../../../shared/client';
import { runWorkers } from '../../../shared/informers';
import { checkPolicy } from '../../../shared/cel/policy-typecheck';
import { cachesSynced, go, queueFor } from '../../app/controller-util';
import { ServerSchemaSource, type DocumentCache } from './schemas';

export const CONTROLLER_NAME = 'validatingadmissionpolicy-status-controller';
/** The field manager of the status it writes (kube's ControllerName). */
export const FIELD_MANAGER = 'validatingadmissionpolicy-status';

/** The resource the controller watches and writes the status of. */
export const POLICIES = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingadmissionpolicies',
  kind: 'ValidatingAdmissionPolicy',
  namespaced: false,
};

export function startValidatingAdmissionPolicyStatusController(ctx: ControllerContext): void {
  const policies = ctx.informers.forResource(POLICIES);
  const queue = queueFor<string>(ctx, FIELD_MANAGER);
  const enqueue = (p: KubeObject) => queue.add(p.metadata.name!);
  policies.addEventHandler({ onAdd: enqueue, onUpdate: (_old, p) => enqueue(p) });
  const client = ctx.client.resource(POLICIES);
  const docs: DocumentCache = new Map();

  const sync = async (name: string): Promise<void> => {
    const policy = policies.lister().get(name);
    if (!policy) return; // deleted
    const generation = policy.metadata.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    const warnings = await checkPolicy(policy, new ServerSchemaSource(ctx.client, docs, ctx.signal));
    ctx.log.v(4)?.info('type checked ValidatingAdmissionPolicy', { policy: name, warnings: warnings.length });
    await client.applyStatus(
      {
        apiVersion: `${POLICIES.group}/${POLICIES.version}`,
        kind: POLICIES.kind,
        metadata: { name },
        status: {
          observedGeneration: generation,
          typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
        },
      } as Partial<KubeObject> & { metadata: { name: string } },
      { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal },
    );
  };

  go(ctx, 'validatingadmissionpolicy status controller', async () => {
    if (!(await cachesSynced(ctx, FIELD_MANAGER, policies))) return;
    await runWorkers(queue, sync, {
      workers: ctx.options.concurrentValidatingAdmissionPolicyStatusSyncs ?? 5,
      signal: ctx.signal,
    });
  });
}

export const validatingAdmissionPolicyStatusController: ControllerDescriptor = {
  name: CONTROLLER_NAME,
  start: startValidatingAdmissionPolicyStatusController,
};
