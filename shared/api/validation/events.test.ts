// Event rules (core/v1 and events.k8s.io/v1) with Kubernetes' exact messages.
import assert from 'node:assert/strict';
import { applyDefaults } from '../defaults';
import { fieldErrorMessage } from '../field-errors';
import { validateObject, validateObjectUpdate } from './index';

type O = Record<string, unknown>;
const check = (o: O) => validateObject(applyDefaults(structuredClone(o))).map(fieldErrorMessage);
const checkUpdate = (o: O, old: O) =>
  validateObjectUpdate(applyDefaults(structuredClone(o)), applyDefaults(structuredClone(old))).map(
    fieldErrorMessage,
  );
const meta = (name = 'x', namespace: string | null = 'default') =>
  namespace ? { name, namespace } : { name };

describe('Events', () => {
  const v1 = (extra: O) => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: meta('e'),
    eventTime: '2024-05-01T10:00:00.000000Z',
    action: 'Pulling',
    reason: 'Pulling',
    type: 'Normal',
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    ...extra,
  });
  it('events.k8s.io/v1: required fields for new events, limits, type, deprecated fields', () => {
    assert.deepEqual(check(v1({})), []);
    assert.deepEqual(
      check(
        v1({
          action: '',
          reason: 'r'.repeat(129),
          type: 'Info',
          note: 'n'.repeat(1025),
          reportingInstance: '',
          deprecatedCount: 2,
          deprecatedSource: { component: 'x' },
        }),
      ),
      [
        'reportingInstance: Required value',
        'action: Required value',
        'reason: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters',
        'type: Invalid value: "": has invalid value: Info',
        'deprecatedCount: Invalid value: "": needs to be unset',
        'deprecatedSource: Invalid value: "": needs to be unset',
      ],
    );
    assert.deepEqual(
      check(v1({ eventTime: undefined, regarding: { kind: 'Pod', name: 'p', namespace: 'other' } })),
      [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
        'eventTime: Required value',
      ],
    );
    assert.deepEqual(check(v1({ series: { count: 1 } })), [
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ]);
  });

  it('events.k8s.io/v1 update: the event is immutable but its series', () => {
    const old = { ...v1({}), metadata: { ...meta('e'), resourceVersion: '1' } };
    assert.deepEqual(
      checkUpdate(
        { ...old, note: 'changed', series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } },
        old,
      ),
      ['message: Invalid value: "changed": field is immutable'],
    );
  });

  it('core/v1 Event: involvedObject namespace must match', () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: meta('e'),
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' },
      reason: 'X',
    };
    assert.deepEqual(check(ev), [
      'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    ]);
  });
});
