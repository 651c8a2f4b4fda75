// PersistentVolumes record when their phase last changed
// (status.lastPhaseTransitionTime, GA 1.31): on create (Pending), and on a
// status write that changes the phase unless the writer set a new time itself.
import type { ResourceBehaviour } from '../registry';
import { statusStrategy } from '../registry';
import { rfc3339 } from '../../../shared/api/validation/gotime';

const now = () => rfc3339(new Date());

export const persistentVolumeBehaviour: ResourceBehaviour = {
  strategy: {
    prepareForCreate(pv) {
      pv.status = { phase: 'Pending', lastPhaseTransitionTime: now() };
    },
  },
  subresources: {
    status: {
      strategy: {
        ...statusStrategy,
        merge(incoming, old, ctx) {
          const out = statusStrategy.merge(incoming, old, ctx);
          const phase = out.status?.phase;
          const was = old.status?.phase;
          const t = out.status?.lastPhaseTransitionTime;
          if (phase !== was && (!t || t === old.status?.lastPhaseTransitionTime))
            out.status = { ...out.status, lastPhaseTransitionTime: now() };
          return out;
        },
      },
    },
  },
};
