// The cel-spec conformance cases that apply to Kubernetes' CEL, one test each.
// Listed as pending (conformance-gaps.json): the engine's known gaps, and the cases
// where Kubernetes itself answers otherwise than the cel-spec (its cel-go string
// formatter; string-format.test.ts checks what Kubernetes answers there).
import assert from 'node:assert/strict';
import { conformanceCases } from './conformance';
import gaps from './conformance-gaps.json';

describe('CEL conformance (cel-spec simple tests)', () => {
  const cases = conformanceCases();
  const engineGaps = new Set<string>(gaps.engine);
  const kubernetesDiffers = new Set<string>(gaps.kubernetes);

  it('has the applicable sections and a gap list naming real cases', () => {
    assert.ok(cases.length > 1000, `only ${cases.length} cases`);
    const names = new Set(cases.map((c) => c.name));
    assert.deepEqual(
      [...gaps.engine, ...gaps.kubernetes].filter((g: string) => !names.has(g)),
      [],
    );
  });

  for (const c of cases) {
    if (engineGaps.has(c.name) || kubernetesDiffers.has(c.name)) {
      it.skip(`${c.name} (${engineGaps.has(c.name) ? 'engine gap' : 'Kubernetes differs from the spec'})`);
      continue;
    }
    it(c.name, () => {
      const r = c.run();
      assert.ok(r.ok, `${c.expr} gave ${r.got}`);
    });
  }
});
