import assert from 'node:assert/strict';
import { ago, S, M, row, names, wideNames, meta } from './printers-testing';

describe('printers: events', () => {
  it('core/v1 event: Last Seen, Type, Reason, Object, Message (+ wide)', () => {
    const ev = {
      metadata: meta('web-7d4b9c8f6-x2kqp.17c5a2b1f3a4d5e6', ago(10 * M)),
      involvedObject: {
        kind: 'Pod',
        name: 'web-7d4b9c8f6-x2kqp',
        namespace: 'default',
        fieldPath: 'spec.containers{app}',
      },
      reason: 'BackOff',
      message: 'Back-off restarting failed container app in pod web\n',
      source: { component: 'kubelet', host: 'worker-1' },
      firstTimestamp: ago(10 * M),
      lastTimestamp: ago(2 * M),
      count: 7,
      type: 'Warning',
    };
    assert.deepEqual(row('', 'Event', ev), [
      '2m',
      'Warning',
      'BackOff',
      'pod/web-7d4b9c8f6-x2kqp',
      'spec.containers{app}',
      'kubelet, worker-1',
      'Back-off restarting failed container app in pod web',
      '10m',
      7,
      'web-7d4b9c8f6-x2kqp.17c5a2b1f3a4d5e6',
    ]);
    assert.deepEqual(names('', 'Event'), [
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Subobject',
      'Source',
      'Message',
      'First Seen',
      'Count',
      'Name',
    ]);
    assert.deepEqual(wideNames('', 'Event'), ['Subobject', 'Source', 'First Seen', 'Count', 'Name']);
  });

  it('events.k8s.io/v1 event with a series and reporting controller', () => {
    const ev = {
      metadata: meta('web.1', ago(30 * M)),
      eventTime: ago(30 * M),
      series: { count: 4, lastObservedTime: ago(90 * S) },
      reportingController: 'default-scheduler',
      reportingInstance: 'default-scheduler-cp-1',
      action: 'Scheduling',
      reason: 'FailedScheduling',
      regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
      note: '0/3 nodes are available',
      type: 'Warning',
    };
    assert.deepEqual(row('events.k8s.io', 'Event', ev), [
      '90s',
      'Warning',
      'FailedScheduling',
      'pod/web',
      '',
      'default-scheduler, default-scheduler-cp-1',
      '0/3 nodes are available',
      '30m',
      4,
      'web.1',
    ]);
  });

  it('singleton event without timestamps counts 1; kind without name', () => {
    const ev = {
      metadata: meta('n.1'),
      involvedObject: { kind: 'Node' },
      reason: 'Starting',
      type: 'Normal',
    };
    assert.deepEqual(row('', 'Event', ev).slice(0, 4), ['<unknown>', 'Normal', 'Starting', 'node']);
    assert.equal(row('', 'Event', ev)[8], 1);
  });
});
