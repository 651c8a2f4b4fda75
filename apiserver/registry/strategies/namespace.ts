// Namespaces: phase Active on create; a delete marks the namespace Terminating
// and leaves the removal to the namespace controller, which empties it and
// clears spec.finalizers through the /finalize subresource.
import type { ResourceBehaviour } from '../registry';
import { rfc3339 } from '../../../shared/api/validation/gotime';

export const namespaceBehaviour: ResourceBehaviour = {
  strategy: {
    keepStatusOnCreate: false,
    prepareForCreate(obj) {
      obj.status = { phase: 'Active' };
      obj.spec = { ...(obj.spec ?? {}) };
      if (!obj.spec.finalizers) obj.spec.finalizers = ['kubernetes'];
    },
    prepareForUpdate(obj, old) {
      // spec.finalizers changes only through /finalize.
      obj.spec = { ...(obj.spec ?? {}), finalizers: old.spec?.finalizers };
      if (obj.spec.finalizers === undefined) delete obj.spec.finalizers;
    },
    onDelete(obj, ctx) {
      const md = obj.metadata;
      const specFinalizers = obj.spec?.finalizers ?? [];
      const metaFinalizers = md.finalizers ?? [];
      if (md.deletionTimestamp) {
        return specFinalizers.length || metaFinalizers.length ? obj : null;
      }
      if (!specFinalizers.length && !metaFinalizers.length) return null;
      md.deletionTimestamp = rfc3339(ctx.now());
      md.deletionGracePeriodSeconds = 0;
      obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
      return obj;
    },
    deleteOnUpdateWhenFinalized: (obj) => !(obj.spec?.finalizers?.length > 0),
  },
  subresources: {
    finalize: {
      strategy: {
        merge(incoming, old) {
          const out = { ...old, spec: { ...(old.spec ?? {}), finalizers: incoming.spec?.finalizers ?? [] } };
          if (!out.spec.finalizers.length) delete out.spec.finalizers;
          return out;
        },
      },
    },
    status: {
      strategy: {
        merge(incoming, old) {
          return { ...old, status: incoming.status ?? {} };
        },
      },
    },
  },
};
