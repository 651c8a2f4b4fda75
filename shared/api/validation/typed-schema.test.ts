// The typed schema (enums and required lists only, for objects the typed decode
// accepted) must find exactly what the full schema finds on such objects.
import assert from 'node:assert/strict';
import { definitionOf, typeSchema } from '../schema';
import { decodeBody } from '../field-validation';
import { applyDefaults } from '../defaults';
import { fieldErrorMessage } from '../field-errors';
import { gvkOf } from './index';
import { schemaErrors } from './schema-validator';
import { FIXTURES } from './test-fixtures';

type Obj = Record<string, unknown>;
type Mutation = (root: Obj) => void;

/** Every enum field set to a value outside it, and every required field removed, one at a time. */
function mutations(value: unknown, def: string, at: (root: Obj) => unknown, out: Mutation[]): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const t = typeSchema(def);
  if (!t?.properties) return;
  const o = value as Obj;
  for (const name of t.required ?? [])
    if (name in o)
      out.push((root) => {
        delete (at(root) as Obj)[name];
      });
  for (const [name, f] of Object.entries(t.properties)) {
    const v = o[name];
    if (v === undefined) continue;
    const here = (root: Obj) => (at(root) as Obj)[name];
    if (f.enum && typeof v === 'string')
      out.push((root) => {
        (at(root) as Obj)[name] = 'NotOneOfThem';
      });
    if (f.ref) mutations(v, f.ref, here, out);
    else if (f.items?.ref && Array.isArray(v))
      v.forEach((item, i) => mutations(item, f.items!.ref!, (root) => (here(root) as unknown[])[i], out));
    else if (f.values?.ref && typeof v === 'object')
      for (const k of Object.keys(v as Obj))
        mutations((v as Obj)[k], f.values.ref, (root) => (here(root) as Obj)[k], out);
  }
}

/** The fixture decoded as a request body would be (so the typed schema applies), then defaulted. */
function decoded(fixture: Obj): Obj {
  const { object } = decodeBody(JSON.stringify(fixture), {
    format: 'json',
    fieldValidation: 'Ignore',
    gvk: gvkOf(fixture),
  });
  return applyDefaults(object);
}

const messages = (obj: Obj) => schemaErrors(obj, gvkOf(obj)).map(fieldErrorMessage);

describe('typed schema', () => {
  let total = 0;
  for (const [name, fixture] of Object.entries(FIXTURES)) {
    it(`${name}: finds what the full schema finds, for every enum and required field broken`, () => {
      const def = definitionOf(gvkOf(fixture))!;
      const muts: Mutation[] = [];
      mutations(decoded(fixture), def, (root) => root, muts);
      for (const m of [() => {}, ...muts]) {
        const typed = decoded(fixture);
        m(typed);
        // A copy is no object the decode accepted: it gets the full schema.
        const full = structuredClone(typed);
        assert.deepEqual(messages(typed), messages(full));
      }
      total += muts.length;
    });
  }

  it('broke enough fields to mean something', () => {
    assert.ok(total > 50, `only ${total} mutations`);
  });

  it('reports an enum and a missing required field on a decoded pod', () => {
    const pod = decoded(FIXTURES.Pod);
    const spec = pod.spec as Obj;
    spec.restartPolicy = 'Sometimes';
    delete (spec.containers as Obj[])[0].name;
    const errs = messages(pod);
    assert.ok(
      errs.some((e) => e.startsWith('spec.restartPolicy: Unsupported value: "Sometimes"')),
      errs.join('\n'),
    );
    assert.ok(
      errs.some((e) => e.startsWith('spec.containers[0].name: Required value')),
      errs.join('\n'),
    );
  });

  it('keeps checking types on objects no decode has seen (a patch result)', () => {
    const pod = structuredClone(decoded(FIXTURES.Pod));
    ((pod.spec as Obj).containers as Obj[])[0].image = 42;
    const errs = messages(pod);
    assert.ok(
      errs.some((e) => e.includes('spec.containers[0].image') && e.includes('must be of type string')),
      errs.join('\n'),
    );
  });
});
