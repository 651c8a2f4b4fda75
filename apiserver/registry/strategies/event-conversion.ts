// events.k8s.io/v1 Event <-> core v1 Event: the same object under renamed
// fields (regarding/involvedObject, note/message, deprecated* counters ...).

export function eventToCore(e: any): any {
  const out: any = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: e.metadata,
    involvedObject: e.regarding ?? {},
    reason: e.reason,
    message: e.note,
    type: e.type,
    eventTime: e.eventTime,
    action: e.action,
    reportingComponent: e.reportingController ?? '',
    reportingInstance: e.reportingInstance ?? '',
  };
  if (e.related) out.related = e.related;
  if (e.series) out.series = { count: e.series.count, lastObservedTime: e.series.lastObservedTime };
  if (e.deprecatedSource) out.source = e.deprecatedSource;
  if (e.deprecatedFirstTimestamp) out.firstTimestamp = e.deprecatedFirstTimestamp;
  if (e.deprecatedLastTimestamp) out.lastTimestamp = e.deprecatedLastTimestamp;
  if (e.deprecatedCount) out.count = e.deprecatedCount;
  return dropUndefined(out);
}

export function eventFromCore(e: any): any {
  const out: any = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: e.metadata,
    eventTime: e.eventTime ?? null,
    reportingController: e.reportingComponent || e.source?.component || undefined,
    reportingInstance: e.reportingInstance || e.source?.host || undefined,
    action: e.action,
    reason: e.reason,
    regarding: e.involvedObject,
    related: e.related,
    note: e.message,
    type: e.type,
  };
  if (e.series) out.series = { count: e.series.count, lastObservedTime: e.series.lastObservedTime };
  if (e.source && (e.source.component || e.source.host)) out.deprecatedSource = e.source;
  if (e.firstTimestamp) out.deprecatedFirstTimestamp = e.firstTimestamp;
  if (e.lastTimestamp) out.deprecatedLastTimestamp = e.lastTimestamp;
  if (e.count) out.deprecatedCount = e.count;
  return dropUndefined(out);
}

function dropUndefined(o: any): any {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
