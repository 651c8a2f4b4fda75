// Events live --event-ttl in the store (a TTL key), in core v1 form; the
// events.k8s.io/v1 API is a second view of the same objects.
import type { ResourceBehaviour } from '../registry';
import { eventToCore, eventFromCore } from './event-conversion';

export function eventBehaviour(eventTTLSeconds: number): ResourceBehaviour {
  return {
    strategy: {
      allowCreateOnUpdate: true,
      ttlSeconds: () => eventTTLSeconds,
    },
  };
}

export function eventsV1Behaviour(eventTTLSeconds: number): ResourceBehaviour {
  return {
    ...eventBehaviour(eventTTLSeconds),
    storedAs: { group: '', resource: 'events' },
    conversions: { 'events.k8s.io/v1': { toStorage: eventToCore, fromStorage: eventFromCore } },
  };
}
