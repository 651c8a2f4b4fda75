import assert from 'node:assert/strict';
import { printerFor } from '../api/printers';
import { isStatusError } from '../api/status';
import { parseIncludeObject, tableWatchEncoder, toTable } from './table';

const NOW = Date.parse('2024-05-01T12:00:00Z');

const pod = (name: string, rv: string, phase = 'Running') => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    resourceVersion: rv,
    creationTimestamp: '2024-05-01T11:00:00Z',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubectl', operation: 'Update' }],
  },
  spec: { nodeName: 'worker-1', containers: [{ name: 'app', image: 'nginx' }] },
  status: {
    phase,
    podIPs: [{ ip: '10.244.1.9' }],
    containerStatuses: [
      phase === 'Running'
        ? { name: 'app', ready: true, restartCount: 0, state: { running: {} } }
        : {
            name: 'app',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
    ],
  },
});

const podList = (items: unknown[], metadata: Record<string, unknown> = { resourceVersion: '500' }) => ({
  kind: 'PodList',
  apiVersion: 'v1',
  metadata,
  items,
});

const pods = printerFor('', 'Pod');

describe('Table: lists and single objects', () => {
  it('a list: columns, one row per item, list metadata', () => {
    const t = toTable(
      podList([pod('a', '10'), pod('b', '11')], {
        resourceVersion: '500',
        continue: 'tok',
        remainingItemCount: 7,
      }),
      pods,
      {
        now: NOW,
      },
    );
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(t.metadata, { resourceVersion: '500', continue: 'tok', remainingItemCount: 7 });
    assert.equal(t.columnDefinitions, pods.columns);
    assert.deepEqual(Object.keys(t.columnDefinitions![0]), [
      'name',
      'type',
      'format',
      'description',
      'priority',
    ]);
    assert.equal(t.rows.length, 2);
    assert.deepEqual(t.rows[0].cells, [
      'a',
      '1/1',
      'Running',
      '0',
      '60m',
      '10.244.1.9',
      'worker-1',
      '<none>',
      '<none>',
    ]);
    assert.deepEqual(Object.keys(t.rows[0]), ['cells', 'object']);
    assert.deepEqual(Object.keys(t), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
  });

  it('an empty list has no rows and omits empty list metadata', () => {
    const t = toTable(podList([], { resourceVersion: '9', continue: '' }), pods, { now: NOW });
    assert.deepEqual(t.rows, []);
    assert.deepEqual(t.metadata, { resourceVersion: '9' });
  });

  it('a single get is a one-row table with the object resourceVersion', () => {
    const t = toTable(pod('a', '10'), pods, { now: NOW });
    assert.deepEqual(t.metadata, { resourceVersion: '10' });
    assert.equal(t.rows.length, 1);
    assert.equal(t.rows[0].cells[0], 'a');
  });

  it('completed pods carry row conditions before the object', () => {
    const t = toTable(pod('done', '3', 'Succeeded'), pods, { now: NOW });
    assert.deepEqual(Object.keys(t.rows[0]), ['cells', 'conditions', 'object']);
    assert.equal(t.rows[0].conditions![0].type, 'Completed');
  });

  it('v1beta1 tables and partial rows', () => {
    const t = toTable(pod('a', '10'), pods, { now: NOW, version: 'v1beta1' });
    assert.equal(t.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual((t.rows[0].object as any).apiVersion, 'meta.k8s.io/v1beta1');
  });
});

describe('Table: includeObject', () => {
  const p = pod('a', '10');

  it('Metadata (default): a PartialObjectMetadata with the whole metadata', () => {
    const row = toTable(p, pods, { now: NOW }).rows[0];
    assert.deepEqual(row.object, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: p.metadata,
    });
    assert.deepEqual(Object.keys(row.object as object), ['kind', 'apiVersion', 'metadata']);
  });

  it('Object: the full object', () => {
    assert.equal(toTable(p, pods, { now: NOW, includeObject: 'Object' }).rows[0].object, p);
  });

  it('None: the row object is null, as Kubernetes encodes it', () => {
    const row = toTable(p, pods, { now: NOW, includeObject: 'None' }).rows[0];
    assert.equal(row.object, null);
    assert.equal(JSON.stringify(row).endsWith('"object":null}'), true);
  });

  it('parses the query parameter; bad values are a 400 with the Kubernetes message', () => {
    assert.equal(parseIncludeObject(undefined), 'Metadata');
    assert.equal(parseIncludeObject(''), 'Metadata');
    assert.equal(parseIncludeObject('Object'), 'Object');
    assert.equal(parseIncludeObject('None'), 'None');
    assert.throws(
      () => parseIncludeObject('object'),
      (e: unknown) =>
        isStatusError(e, 'BadRequest') &&
        e.code === 400 &&
        e.message ===
          `Unable to convert to Table as requested: includeObject: Invalid value: "object": must be 'Metadata', 'Object', 'None', or empty`,
    );
  });
});

describe('Table: watch', () => {
  it('column definitions only on the first event; each event is one row', () => {
    let t = NOW;
    const enc = tableWatchEncoder(pods, { clock: () => t });
    const first = enc(pod('a', '10')) as any;
    t += 60_000;
    const second = enc(pod('a', '11')) as any;
    assert.equal(first.columnDefinitions, pods.columns);
    assert.equal(second.columnDefinitions, null);
    assert.equal(second.rows.length, 1);
    assert.equal(second.metadata.resourceVersion, '11');
    assert.equal(first.rows[0].cells[4], '60m');
    assert.equal(second.rows[0].cells[4], '61m');
  });

  it('ERROR Status objects pass through untransformed', () => {
    const enc = tableWatchEncoder(pods, { clock: () => NOW });
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' };
    assert.equal(enc(status), status);
    assert.equal((enc(pod('a', '1')) as any).columnDefinitions, null);
  });

  it('printers that always send headers (APIService) keep them on every event', () => {
    const enc = tableWatchEncoder(printerFor('apiregistration.k8s.io', 'APIService'), { clock: () => NOW });
    const svc = { metadata: { name: 'v1.', creationTimestamp: '2024-05-01T00:00:00Z' }, spec: {} };
    enc(svc);
    assert.notEqual((enc(svc) as any).columnDefinitions, null);
  });

  it('noHeaders on a plain toTable call', () => {
    assert.equal(toTable(pod('a', '1'), pods, { now: NOW, noHeaders: true }).columnDefinitions, null);
  });
});

describe('Table: rendering a large list stays cheap', () => {
  it('10k pods', () => {
    const items = Array.from({ length: 10_000 }, (_, i) => pod(`pod-${i}`, String(i + 1)));
    const list = podList(items);
    const start = process.hrtime.bigint();
    const t = toTable(list, pods, { now: NOW });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    assert.equal(t.rows.length, 10_000);
    assert.equal(t.rows[9999].cells[0], 'pod-9999');
    // A generous bound: this guards against accidental quadratic work, not speed.
    assert.ok(ms < 2000, `took ${ms}ms`);
  });
});
