import assert from 'node:assert/strict';
import { checkShowHiddenVersion, MetricsRegistry } from './registry';

describe('metrics registry', () => {
  it('exposes counters, gauges and histograms in the Prometheus text format', () => {
    const r = new MetricsRegistry({ currentVersion: '1.36' });
    r.counter({ name: 'a_total', help: 'A.', labels: ['x'], stability: 'STABLE' }).inc({ x: 'q"1' }, 2);
    r.gauge({ name: 'b', help: 'B.' }).set(undefined, 5);
    const h = r.histogram({ name: 'c_seconds', help: 'C.', labels: ['v'] }, [0.1, 1]);
    h.observe({ v: 'GET' }, 0.05);
    h.observe({ v: 'GET' }, 0.5);
    const text = r.expose();
    assert.match(text, /^# HELP a_total \[STABLE\] A\.\n# TYPE a_total counter\na_total\{x="q\\"1"\} 2$/m);
    assert.match(text, /^b 5$/m);
    assert.match(text, /^c_seconds_bucket\{v="GET",le="0.1"\} 1$/m);
    assert.match(text, /^c_seconds_bucket\{v="GET",le="1"\} 2$/m);
    assert.match(text, /^c_seconds_bucket\{v="GET",le="\+Inf"\} 2$/m);
    assert.match(text, /^c_seconds_count\{v="GET"\} 2$/m);
  });

  it('writes a sample timestamp (ms) after the value of series read at a known time, only for those', () => {
    const r = new MetricsRegistry({ currentVersion: '1.36' });
    const c = r.counter({ name: 'a_total', help: 'A.', labels: ['x'] });
    c.inc({ x: '1' }, 2.5, 1_700_000_000_123);
    c.inc({ x: '2' }, 1);
    const g = r.gauge({ name: 'b', help: 'B.', labels: ['x'] });
    g.set({ x: '1' }, 7, 1_700_000_000_456.4);
    g.set({ x: '2' }, 8, 1_700_000_000_789);
    g.delete({ x: '2' });
    g.set({ x: '2' }, 9);
    const samples = r
      .expose()
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(samples, [
      'a_total{x="1"} 2.5 1700000000123',
      'a_total{x="2"} 1',
      'b{x="1"} 7 1700000000456',
      'b{x="2"} 9',
    ]);
  });

  it("orders families in Go's byte order, as client_golang does (not by locale)", () => {
    const r = new MetricsRegistry({ currentVersion: '1.36' });
    for (const name of ['b_total', 'a_b', 'a1b', 'B_up']) r.gauge({ name, help: 'X.' }).set(undefined, 1);
    const order = [...r.expose().matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
    // Bytes: 'B' < '_' < 'a' ... and '1' < '_'; a locale collation puts 'a_b' before 'a1b' and 'B_up' after 'a1b'.
    assert.deepEqual(order, ['B_up', 'a1b', 'a_b', 'b_total']);
  });

  it('marks deprecated metrics, hides those deprecated three releases ago, and disables by name', () => {
    const make = (opts: { showHiddenFor?: string; disabled?: string[] } = {}) => {
      const r = new MetricsRegistry({ currentVersion: '1.36', ...opts });
      r.gauge({ name: 'recent', help: 'R.', deprecatedVersion: '1.35' }).set(undefined, 1);
      r.gauge({ name: 'old', help: 'O.', deprecatedVersion: '1.33' }).set(undefined, 1);
      r.gauge({ name: 'gone', help: 'G.', deprecatedVersion: '1.30' }).set(undefined, 1);
      r.gauge({ name: 'plain', help: 'P.' }).set(undefined, 1);
      return r.expose();
    };
    const text = make();
    assert.match(text, /# HELP recent \[ALPHA\] \(Deprecated from 1\.35\) R\./);
    assert.doesNotMatch(text, /^old /m);
    assert.doesNotMatch(text, /^gone /m);
    assert.match(make({ showHiddenFor: '1.35' }), /^old 1$/m);
    assert.doesNotMatch(make({ showHiddenFor: '1.35', disabled: ['old'] }), /^old /m);
    assert.doesNotMatch(make({ disabled: ['plain'] }), /^plain /m);
  });

  it('accepts only the previous minor release for --show-hidden-metrics-for-version', () => {
    checkShowHiddenVersion('1.35', '1.36');
    checkShowHiddenVersion(undefined, '1.36');
    assert.throws(() => checkShowHiddenVersion('1.34', '1.36'), /Only the previous minor version is allowed/);
    assert.throws(() => checkShowHiddenVersion('x', '1.36'), /must be omitted or have the value '1.35'/);
  });
});
