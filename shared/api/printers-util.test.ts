import assert from 'node:assert/strict';
import {
  formatLabels,
  formatLabelSelector,
  humanDuration,
  labelSelectorString,
  rfc3339,
  since,
  containerCells,
} from './printers-util';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

describe('printers: human durations (kubectl AGE)', () => {
  const cases: [number, string][] = [
    [-3 * S, '<invalid>'],
    [-1.5 * S, '0s'],
    [-0.5 * S, '0s'],
    [0, '0s'],
    [5 * S, '5s'],
    [59 * S, '59s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 2 * S, '3m2s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [4 * H, '4h'],
    [4 * H + 5 * M, '4h5m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 3 * H, '2d3h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D + 5 * H, '8d'],
    [729 * D, '729d'],
    [2 * Y, '2y'],
    [2 * Y + 10 * D, '2y10d'],
    [7 * Y + 364 * D, '7y364d'],
    [8 * Y + 100 * D, '8y'],
    [20 * Y, '20y'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms}ms -> ${want}`, () => assert.equal(humanDuration(ms), want));
  }

  it('ages from timestamps with an injected clock; unset and zero times are <unknown>', () => {
    const now = Date.parse('2024-05-01T12:00:00Z');
    assert.equal(since('2024-05-01T11:56:58Z', now), '3m2s');
    assert.equal(since('2024-04-29T09:00:00Z', now), '2d3h');
    assert.equal(since(undefined, now), '<unknown>');
    assert.equal(since('0001-01-01T00:00:00Z', now), '<unknown>');
    assert.equal(since('2024-05-01T12:00:10Z', now), '<invalid>');
  });

  it('Created At is RFC 3339 in UTC, Go zero time when unset', () => {
    assert.equal(rfc3339('2024-05-01T12:00:00Z'), '2024-05-01T12:00:00Z');
    assert.equal(rfc3339('2024-05-01T14:00:00+02:00'), '2024-05-01T12:00:00Z');
    assert.equal(rfc3339('2024-05-01T12:00:00.123456Z'), '2024-05-01T12:00:00Z');
    assert.equal(rfc3339(undefined), '0001-01-01T00:00:00Z');
  });
});

describe('printers: labels and selectors', () => {
  it('formats label maps sorted, <none> when empty', () => {
    assert.equal(formatLabels({ tier: 'web', app: 'nginx' }), 'app=nginx,tier=web');
    assert.equal(formatLabels({}), '<none>');
    assert.equal(formatLabels(undefined), '<none>');
  });

  it('formats label selectors as Kubernetes selector strings', () => {
    assert.equal(
      labelSelectorString({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['prod', 'canary'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'zone', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
      'app=web,env notin (dev),!legacy,tier in (canary,prod),zone',
    );
    assert.equal(labelSelectorString(undefined), '');
    assert.equal(labelSelectorString({}), '');
    assert.equal(formatLabelSelector({}), '<none>');
    assert.equal(formatLabelSelector({ matchLabels: { app: 'x' } }), 'app=x');
    assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), '<error>');
    assert.equal(
      formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      '<error>',
    );
  });

  it('lays out containers and images', () => {
    assert.deepEqual(
      containerCells([
        { name: 'app', image: 'nginx:1.27' },
        { name: 'sidecar', image: 'envoy:v1' },
      ]),
      ['app,sidecar', 'nginx:1.27,envoy:v1'],
    );
    assert.deepEqual(containerCells(undefined), ['', '']);
  });
});
