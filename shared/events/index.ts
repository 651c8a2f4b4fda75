// shared/events: the events.k8s.io/v1 event recorder of controllers and the node agent.
export {
  EventBroadcaster,
  FakeRecorder,
  objectReference,
  sprintf,
  truncateNote,
  type EventBroadcasterOptions,
  type EventObject,
  type EventRecorder,
  type EventType,
  type ObjectReference,
  type Referable,
} from './recorder';
