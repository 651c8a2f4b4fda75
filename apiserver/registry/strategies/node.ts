// Nodes keep the status the registering agent sends; spec.unschedulable is selectable.
import type { ResourceBehaviour } from '../registry';

export const nodeBehaviour: ResourceBehaviour = {
  strategy: {
    keepStatusOnCreate: true,
    fieldSelectors: ['spec.unschedulable'],
    selectableFields: (obj) => ({ 'spec.unschedulable': String(!!obj.spec?.unschedulable) }),
  },
};
