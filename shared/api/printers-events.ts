// Printers of events. Core v1 events and events.k8s.io v1 events print
// alike: Kubernetes converts both to the same internal event first.
import { column, int, parseTime, since, wide, type Cell, type Printer } from './printers-util';

const eventColumns = [
  column('Last Seen', 'string', 'Time since the event was last seen.'),
  column('Type', 'string', 'Type of the event (Normal, Warning).'),
  column('Reason', 'string', 'Short machine-readable reason for the event.'),
  column('Object', 'string', 'Object the event is about.'),
  wide('Subobject', 'string', 'Field of the object the event is about.'),
  wide('Source', 'string', 'Component that reported the event.'),
  column('Message', 'string', 'Human-readable description of the event.'),
  wide('First Seen', 'string', 'Time since the event was first seen.'),
  wide('Count', 'string', 'Number of times the event occurred.'),
  column('Name', 'string', 'Name of the event object.', { format: 'name', priority: 1 }),
];

interface EventView {
  first: unknown;
  eventTime: unknown;
  last: unknown;
  count: unknown;
  series: any;
  regarding: any;
  component: string;
  host: string;
  controller: string;
  instance: string;
  message: unknown;
}

function eventCells(obj: any, e: EventView, now: number): Cell[] {
  let first = since(e.first, now);
  if (parseTime(e.first) === undefined) first = since(e.eventTime, now);
  let last = parseTime(e.last) === undefined ? first : since(e.last, now);
  let count = int(e.count);
  if (e.series) {
    last = since(e.series.lastObservedTime, now);
    count = int(e.series.count);
  } else if (count === 0) {
    count = 1; // singleton events of the new API carry no count
  }
  const kind = String(e.regarding?.kind ?? '').toLowerCase();
  const target = e.regarding?.name ? `${kind}/${e.regarding.name}` : kind;
  const component = e.component || e.controller;
  const instance = e.host || e.instance;
  return [
    last,
    obj.type ?? '',
    obj.reason ?? '',
    target,
    e.regarding?.fieldPath ?? '',
    instance ? `${component}, ${instance}` : component,
    String(e.message ?? '').trim(),
    first,
    count,
    obj.metadata?.name ?? '',
  ];
}

const coreEvents: Printer = {
  columns: eventColumns,
  cells: (ev, now) =>
    eventCells(
      ev,
      {
        first: ev.firstTimestamp,
        eventTime: ev.eventTime,
        last: ev.lastTimestamp,
        count: ev.count,
        series: ev.series,
        regarding: ev.involvedObject,
        component: ev.source?.component ?? '',
        host: ev.source?.host ?? '',
        controller: ev.reportingComponent ?? '',
        instance: ev.reportingInstance ?? '',
        message: ev.message,
      },
      now,
    ),
};

const eventsV1: Printer = {
  columns: eventColumns,
  cells: (ev, now) =>
    eventCells(
      ev,
      {
        first: ev.deprecatedFirstTimestamp,
        eventTime: ev.eventTime,
        last: ev.deprecatedLastTimestamp,
        count: ev.deprecatedCount,
        series: ev.series,
        regarding: ev.regarding,
        component: ev.deprecatedSource?.component ?? '',
        host: ev.deprecatedSource?.host ?? '',
        controller: ev.reportingController ?? '',
        instance: ev.reportingInstance ?? '',
        message: ev.note,
      },
      now,
    ),
};

export const eventPrinters: Record<string, Printer> = {
  '/Event': coreEvents,
  'events.k8s.io/Event': eventsV1,
};
