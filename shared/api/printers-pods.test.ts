import assert from 'node:assert/strict';
import { printerFor } from './printers';
import { ago, S, M, H, D, row, names, wideNames, meta } from './printers-testing';

const running = (name: string, restartCount = 0, extra: any = {}) => ({
  name,
  ready: true,
  started: true,
  restartCount,
  image: 'nginx',
  state: { running: { startedAt: ago(H) } },
  ...extra,
});

describe('printers: pods', () => {
  it('columns, types and wide columns', () => {
    assert.deepEqual(names('', 'Pod'), [
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP',
      'Node',
      'Nominated Node',
      'Readiness Gates',
    ]);
    assert.deepEqual(wideNames('', 'Pod'), ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    const cols = printerFor('', 'Pod').columns;
    assert.equal(cols[0].format, 'name');
    assert.equal(cols[3].type, 'string');
  });

  it('2/3 ready with 5 restarts, last 2m ago; wide cells', () => {
    const pod = {
      metadata: meta('web-7d4b9c8f6-x2kqp', ago(5 * H)),
      spec: {
        nodeName: 'worker-1',
        containers: [{ name: 'app' }, { name: 'log' }, { name: 'cache' }],
        readinessGates: [{ conditionType: 'example.com/lb' }],
      },
      status: {
        phase: 'Running',
        podIP: '10.244.1.7',
        podIPs: [{ ip: '10.244.1.7' }],
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'example.com/lb', status: 'True' },
        ],
        containerStatuses: [
          running('app', 3, { lastState: { terminated: { exitCode: 1, finishedAt: ago(10 * M) } } }),
          running('log', 2, { lastState: { terminated: { exitCode: 137, finishedAt: ago(2 * M) } } }),
          { name: 'cache', ready: false, restartCount: 0, state: { running: { startedAt: ago(M) } } },
        ],
      },
    };
    assert.deepEqual(row('', 'Pod', pod), [
      'web-7d4b9c8f6-x2kqp',
      '2/3',
      'Running',
      '5 (2m ago)',
      '5h',
      '10.244.1.7',
      'worker-1',
      '<none>',
      '1/1',
    ]);
  });

  it('pending pod without IP or node', () => {
    const pod = {
      metadata: meta('pending', ago(30 * S)),
      spec: { containers: [{ name: 'c' }] },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
      },
    };
    assert.deepEqual(row('', 'Pod', pod), [
      'pending',
      '0/1',
      'Pending',
      '0',
      '30s',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });

  it('CrashLoopBackOff with restarts', () => {
    const pod = {
      metadata: meta('crashy', ago(2 * H)),
      spec: { containers: [{ name: 'c' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'c',
            ready: false,
            restartCount: 12,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(3 * M + 2 * S) } },
          },
        ],
      },
    };
    assert.deepEqual(row('', 'Pod', pod).slice(1, 4), ['0/1', 'CrashLoopBackOff', '12 (3m2s ago)']);
  });

  it('Completed pod carries the Completed row condition', () => {
    const pod = {
      metadata: meta('job-abc'),
      spec: { containers: [{ name: 'c' }] },
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'c',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ],
      },
    };
    assert.deepEqual(row('', 'Pod', pod).slice(1, 4), ['0/1', 'Completed', '0']);
    assert.deepEqual(printerFor('', 'Pod').conditions!(pod), [
      {
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        message: 'The pod has completed successfully.',
      },
    ]);
    assert.equal(printerFor('', 'Pod').conditions!({ status: { phase: 'Running' } }), undefined);
  });

  it('terminated without reason prints the exit code or signal', () => {
    const base = { metadata: meta('x'), spec: { containers: [{ name: 'c' }] } };
    const st = (terminated: any) => ({
      ...base,
      status: { phase: 'Failed', containerStatuses: [{ name: 'c', restartCount: 0, state: { terminated } }] },
    });
    assert.equal(row('', 'Pod', st({ exitCode: 2 }))[2], 'ExitCode:2');
    assert.equal(row('', 'Pod', st({ exitCode: 0, signal: 9 }))[2], 'Signal:9');
  });

  it('Terminating while being deleted; Unknown for lost nodes', () => {
    const pod = {
      metadata: meta('bye', ago(D), { deletionTimestamp: ago(5 * S) }),
      spec: { containers: [{ name: 'c' }] },
      status: { phase: 'Running', containerStatuses: [running('c')] },
    };
    assert.equal(row('', 'Pod', pod)[2], 'Terminating');
    assert.equal(row('', 'Pod', { ...pod, status: { ...pod.status, reason: 'NodeLost' } })[2], 'Unknown');
    // A finished pod stays Completed while it is deleted.
    assert.equal(
      row('', 'Pod', {
        ...pod,
        status: {
          phase: 'Succeeded',
          containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
        },
      })[2],
      'Completed',
    );
  });

  it('init containers: Init:1/2, Init:CrashLoopBackOff, Init:Error', () => {
    const spec = { initContainers: [{ name: 'a' }, { name: 'b' }], containers: [{ name: 'c' }] };
    const done = { name: 'a', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    const pod = (b: any) => ({
      metadata: meta('init'),
      spec,
      status: {
        phase: 'Pending',
        conditions: [{ type: 'Initialized', status: 'False' }],
        initContainerStatuses: [done, b],
        containerStatuses: [
          { name: 'c', restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } },
        ],
      },
    });
    assert.deepEqual(
      row('', 'Pod', pod({ name: 'b', restartCount: 0, state: { running: {} } })).slice(1, 4),
      ['0/1', 'Init:1/2', '0'],
    );
    assert.deepEqual(
      row(
        '',
        'Pod',
        pod({
          name: 'b',
          restartCount: 4,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, finishedAt: ago(40 * S) } },
        }),
      ).slice(1, 4),
      ['0/1', 'Init:CrashLoopBackOff', '4 (40s ago)'],
    );
    assert.equal(
      row(
        '',
        'Pod',
        pod({ name: 'b', restartCount: 0, state: { terminated: { exitCode: 1, reason: 'Error' } } }),
      )[2],
      'Init:Error',
    );
    assert.equal(
      row('', 'Pod', pod({ name: 'b', restartCount: 0, state: { terminated: { exitCode: 3 } } }))[2],
      'Init:ExitCode:3',
    );
  });

  it('sidecar init containers count as containers once started', () => {
    const pod = {
      metadata: meta('with-sidecar'),
      spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }], containers: [{ name: 'app' }] },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        initContainerStatuses: [running('proxy', 1, { lastState: { terminated: { finishedAt: ago(M) } } })],
        containerStatuses: [running('app')],
      },
    };
    assert.deepEqual(row('', 'Pod', pod).slice(1, 4), ['2/2', 'Running', '1 (60s ago)']);
  });

  it('SchedulingGated', () => {
    const pod = {
      metadata: meta('gated'),
      spec: { containers: [{ name: 'c' }], schedulingGates: [{ name: 'x' }] },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
      },
    };
    assert.equal(row('', 'Pod', pod)[2], 'SchedulingGated');
  });

  it('Completed container beside a running one reads Running or NotReady', () => {
    const pod = (ready: string) => ({
      metadata: meta('mixed'),
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready }],
        containerStatuses: [
          { name: 'a', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          running('b'),
        ],
      },
    });
    // The first container status is looked at last, so its Completed wins the reason.
    assert.equal(row('', 'Pod', pod('True'))[2], 'Running');
    assert.equal(row('', 'Pod', pod('False'))[2], 'NotReady');
  });
});
