// Events live --event-ttl in the store (a TTL key), in core v1 form; the
// events.k8s.io/v1 API is a second view of the same objects.
import type { ResourceBehaviour } from '../registry';
import { eventToCore, eventFromCore } from './event-conversion';

export function eventBehaviour(eventTTLSeconds: number): ResourceBehaviour {
  return {
    strategy: {
      allowCreateOnUpdate: true,
      ttlSeconds: () => eventTTLSeconds,
      fieldSelectors: [
        'involvedObject.kind',
        'involvedObject.namespace',
        'involvedObject.name',
        'involvedObject.uid',
        'involvedObject.apiVersion',
        'involvedObject.resourceVersion',
        'involvedObject.fieldPath',
        'reason',
        'reportingComponent',
        'source',
        'type',
      ],
      selectableFields: (e) => ({
        'involvedObject.kind': e.involvedObject?.kind ?? '',
        'involvedObject.namespace': e.involvedObject?.namespace ?? '',
        'involvedObject.name': e.involvedObject?.name ?? '',
        'involvedObject.uid': e.involvedObject?.uid ?? '',
        'involvedObject.apiVersion': e.involvedObject?.apiVersion ?? '',
        'involvedObject.resourceVersion': e.involvedObject?.resourceVersion ?? '',
        'involvedObject.fieldPath': e.involvedObject?.fieldPath ?? '',
        reason: e.reason ?? '',
        reportingComponent: e.reportingComponent ?? '',
        source: e.source?.component ?? '',
        type: e.type ?? '',
      }),
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
