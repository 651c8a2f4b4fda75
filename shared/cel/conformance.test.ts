// The cel-spec conformance cases that apply to Kubernetes' CEL, one test each;
// the engine's known gaps (conformance-gaps.json) are listed as pending.
import assert from 'node:assert/strict';
import { conformanceCases } from './conformance';
import gaps from './conformance-gaps.json';

describe('CEL conformance (cel-spec simple tests)', () => {
  const cases = conformanceCases();
  const known = new Set<string>(gaps);

  it('has the applicable sections and a gap list naming real cases', () => {
    assert.ok(cases.length > 1000, `only ${cases.length} cases`);
    const names = new Set(cases.map((c) => c.name));
    assert.deepEqual(
      gaps.filter((g: string) => !names.has(g)),
      [],
    );
  });

  for (const c of cases) {
    if (known.has(c.name)) {
      it.skip(`${c.name} (engine gap)`);
      continue;
    }
    it(c.name, () => {
      const r = c.run();
      assert.ok(r.ok, `${c.expr} gave ${r.got}`);
    });
  }
});
