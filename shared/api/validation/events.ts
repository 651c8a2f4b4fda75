// Events: core/v1 Event (legacy rules only, as Kubernetes does for v1 requests)
// and events.k8s.io/v1 Event (SPEC "Event resource" and Notable change 6).
// Kubernetes validates both through its internal type, so messages name the
// internal fields (involvedObject, message) even for events.k8s.io.
import type { FieldError } from '../field-errors';
import { invalid, required } from '../field-errors';
import {
  semanticEqual,
  validateImmutableField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './metadata';
import { isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain } from './names';
import { asObj, asStr, type Obj } from './path';
import { registerKindRules } from './registry';

export const ACTION_LIMIT = 128;
export const REASON_LIMIT = 128;
export const REPORTING_INSTANCE_LIMIT = 128;
export const NOTE_LIMIT = 1024;

/** The internal Event fields Kubernetes validates, read from either API version. */
interface EventView {
  namespace: string;
  eventTime: unknown;
  involvedNamespace: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  message: string;
  type: string;
  series: Obj | undefined;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: unknown;
  source: Obj | undefined;
  related: unknown;
  involvedObject: unknown;
}

function view(o: Obj, eventsV1: boolean): EventView {
  const ns = asStr(asObj(o.metadata)?.namespace);
  const involved = eventsV1 ? o.regarding : o.involvedObject;
  return {
    namespace: ns,
    eventTime: o.eventTime,
    involvedObject: involved,
    involvedNamespace: asStr(asObj(involved)?.namespace),
    reportingController: asStr(eventsV1 ? o.reportingController : o.reportingComponent),
    reportingInstance: asStr(o.reportingInstance),
    action: asStr(o.action),
    reason: asStr(o.reason),
    message: asStr(eventsV1 ? o.note : o.message),
    type: asStr(o.type),
    series: asObj(o.series),
    firstTimestamp: eventsV1 ? o.deprecatedFirstTimestamp : o.firstTimestamp,
    lastTimestamp: eventsV1 ? o.deprecatedLastTimestamp : o.lastTimestamp,
    count: eventsV1 ? o.deprecatedCount : o.count,
    source: asObj(eventsV1 ? o.deprecatedSource : o.source),
    related: o.related,
  };
}

function legacyValidate(e: EventView, eventsV1: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const mismatch = () =>
    invalid('involvedObject.namespace', e.involvedNamespace, 'does not match event.namespace');
  if (!e.eventTime) {
    // Old-style events: the namespace must agree with the involved object's.
    if (!e.involvedNamespace) {
      if (e.namespace !== '' && e.namespace !== 'default') errs.push(mismatch());
    } else if (e.namespace !== e.involvedNamespace) errs.push(mismatch());
  } else {
    if (!e.involvedNamespace && e.namespace !== 'default' && e.namespace !== 'kube-system')
      errs.push(mismatch());
    const rc = eventsV1 ? 'reportingController' : 'reportingComponent';
    if (!e.reportingController) errs.push(required(rc, ''));
    for (const m of isQualifiedName(e.reportingController)) errs.push(invalid(rc, e.reportingController, m));
    if (!e.reportingInstance) errs.push(required('reportingInstance', ''));
    if (e.reportingInstance.length > REPORTING_INSTANCE_LIMIT)
      errs.push(invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LIMIT} characters`));
    if (!e.action) errs.push(required('action', ''));
    if (e.action.length > ACTION_LIMIT)
      errs.push(invalid('action', '', `can have at most ${ACTION_LIMIT} characters`));
    if (!e.reason) errs.push(required('reason', ''));
    if (e.reason.length > REASON_LIMIT)
      errs.push(invalid('reason', '', `can have at most ${REASON_LIMIT} characters`));
    if (e.message.length > NOTE_LIMIT)
      errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  for (const m of isDNS1123Subdomain(e.namespace)) errs.push(invalid('namespace', e.namespace, m));
  return errs;
}

function validateSeries(e: EventView): FieldError[] {
  if (!e.series) return [];
  const errs: FieldError[] = [];
  if (!(typeof e.series.count === 'number' && e.series.count >= 2))
    errs.push(invalid('series.count', '', 'should be at least 2'));
  if (!e.series.lastObservedTime) errs.push(required('series.lastObservedTime', ''));
  return errs;
}

registerKindRules('', 'Event', {
  ownMetadata: true,
  validate: (o) => legacyValidate(view(o, false), false),
  validateUpdate: (o) => legacyValidate(view(o, false), false),
  updateOnly: true,
});

registerKindRules('events.k8s.io', 'Event', {
  ownMetadata: true,
  validate(o) {
    const e = view(o, true);
    const errs = legacyValidate(e, true);
    errs.push(...validateObjectMeta(asObj(o.metadata), { namespaced: true, name: nameIsDNSSubdomain }));
    errs.push(...validateSeries(e));
    if (!e.eventTime) errs.push(required('eventTime', ''));
    if (e.type !== 'Normal' && e.type !== 'Warning')
      errs.push(invalid('type', '', `has invalid value: ${e.type}`));
    if (e.firstTimestamp) errs.push(invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
    if (e.lastTimestamp) errs.push(invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
    if (typeof e.count === 'number' && e.count !== 0)
      errs.push(invalid('deprecatedCount', '', 'needs to be unset'));
    if (asStr(e.source?.component) || asStr(e.source?.host))
      errs.push(invalid('deprecatedSource', '', 'needs to be unset'));
    return errs;
  },
  validateUpdate(o, old) {
    const e = view(o, true);
    const p = view(old, true);
    const errs = legacyValidate(e, true);
    errs.push(...validateObjectMetaUpdate(asObj(o.metadata), asObj(old.metadata)));
    if (!semanticEqual(e.series, p.series)) errs.push(...validateSeries(e));
    const same = (a: unknown, b: unknown, f: string) => errs.push(...validateImmutableField(a, b, f));
    same(e.involvedObject, p.involvedObject, 'involvedObject');
    same(e.reason, p.reason, 'reason');
    same(e.message, p.message, 'message');
    same(e.source, p.source, 'source');
    same(e.firstTimestamp, p.firstTimestamp, 'firstTimestamp');
    same(e.lastTimestamp, p.lastTimestamp, 'lastTimestamp');
    same(e.count, p.count, 'count');
    same(e.type, p.type, 'type');
    // Sub-microsecond differences are tolerated; decoded MicroTimes carry six digits.
    same(e.eventTime, p.eventTime, 'eventTime');
    same(e.action, p.action, 'action');
    same(e.related, p.related, 'related');
    same(e.reportingController, p.reportingController, 'reportingController');
    same(e.reportingInstance, p.reportingInstance, 'reportingInstance');
    return errs;
  },
  updateOnly: true,
});
