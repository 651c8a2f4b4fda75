import assert from 'node:assert/strict';
import { rfc3339 } from './meta';

describe('registry/meta: rfc3339', () => {
  it('formats to the second, also across second boundaries and before 1970', () => {
    const cases: [number, string][] = [
      [0, '1970-01-01T00:00:00Z'],
      [999, '1970-01-01T00:00:00Z'],
      [1000, '1970-01-01T00:00:01Z'],
      [-1, '1969-12-31T23:59:59Z'],
      [Date.UTC(2026, 10, 26, 18, 40, 5, 500), '2026-11-26T18:40:05Z'],
      [Date.UTC(2026, 10, 26, 18, 40, 6), '2026-11-26T18:40:06Z'],
      [999, '1970-01-01T00:00:00Z'],
    ];
    for (const [ms, want] of cases) assert.equal(rfc3339(new Date(ms)), want, String(ms));
    assert.throws(() => rfc3339(new Date(NaN)), RangeError);
  });
});
