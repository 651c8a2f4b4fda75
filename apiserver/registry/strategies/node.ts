// Nodes keep the status the registering agent sends.
import type { ResourceBehaviour } from '../registry';

export const nodeBehaviour: ResourceBehaviour = {
  strategy: {
    keepStatusOnCreate: true,
  },
};
