// Test fixtures generated from the schema source: an object of a kind with
// every field filled (nested messages, lists, maps, both forms of
// int-or-string, quantities, times, bytes, embedded JSON, flattened fields).
// Independent of the codec's own plan, so the round-trip tests check it.
import { allTypes } from '../api/schema';
import { omittedWhenZero } from './protobuf-plan';
import type { FieldSchema, TypeSchema } from '../api/schema-types';

export interface FixtureOptions {
  /** Flips the alternatives (int vs string, bool vs schema ...) so both get tested. */
  variant: 0 | 1;
  /** How often a recursive definition may appear on one path. */
  maxRepeat?: number;
}

const SAMPLE_JSON = { a: [1, 'x', true, null, { b: 2.5 }], c: 'ü' };
const FIELDS_V1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': {} };

class Gen {
  private flip: number;
  private readonly stack: string[] = [];

  constructor(private readonly opts: FixtureOptions) {
    this.flip = opts.variant;
  }

  private alt(): boolean {
    return (this.flip++ & 1) === 0;
  }

  definition(name: string): any {
    const t = allTypes()[name];
    if (!t) throw new Error(`no definition ${name}`);
    const short = name.slice(name.lastIndexOf('.') + 1);
    if (name.endsWith('.MicroTime'))
      return this.alt() ? '2024-05-01T10:00:00.123456Z' : '1969-12-31T23:59:58.000001Z';
    if (name.endsWith('.meta.v1.Time')) return this.alt() ? '2024-05-01T10:00:00Z' : '2262-04-11T23:47:16Z';
    if (short === 'Quantity') return this.alt() ? '500m' : '1Gi';
    if (t.format === 'int-or-string') return this.alt() ? 8080 : 'http';
    if (short === 'FieldsV1') return FIELDS_V1;
    if (short === 'RawExtension') return { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } };
    if (short === 'JSON') return this.alt() ? SAMPLE_JSON : 'str';
    if (!t.properties && !t.type) return this.union(name, t);
    return this.object(name, t);
  }

  private union(name: string, _t: TypeSchema): any {
    const schemaName = name.replace(/OrBool$|OrArray$|OrStringArray$/, '');
    const schema = this.recursionOk(schemaName) ? this.definition(schemaName) : { type: 'string' };
    const first = this.alt();
    if (name.endsWith('OrBool')) return first ? false : schema;
    if (name.endsWith('OrArray')) return first ? schema : [schema, { type: 'integer' }];
    return first ? schema : ['a', 'b'];
  }

  private recursionOk(name: string): boolean {
    return this.stack.filter((n) => n === name).length < (this.opts.maxRepeat ?? 1);
  }

  private object(name: string, t: TypeSchema): any {
    this.stack.push(name);
    const out: Record<string, unknown> = {};
    for (const [prop, f] of Object.entries(t.properties ?? {})) {
      if (f.envelope) continue;
      const refs = [f.ref, f.items?.ref, f.values?.ref, f.values?.items?.ref].filter(Boolean) as string[];
      if (refs.some((r) => !this.recursionOk(r))) continue;
      out[prop] = this.field(prop, f);
      // Go drops false of a non-pointer omitempty field: such a fixture would not round-trip.
      if (out[prop] === false && t.protoMessage && omittedWhenZero(t.protoMessage, prop)) out[prop] = true;
    }
    this.stack.pop();
    return out;
  }

  field(prop: string, f: FieldSchema): any {
    if (f.ref) return this.definition(f.ref);
    switch (f.type) {
      case 'array':
        return [this.field(prop, f.items!), this.field(prop, f.items!)];
      case 'object':
        if (!f.values) return {};
        // Unsorted on purpose: the encoder sorts keys bytewise like Go.
        return {
          zeta: this.field(prop, f.values),
          k10: this.field(prop, f.values),
          k9: this.field(prop, f.values),
        };
      case 'string':
        if (f.enum?.length) return f.enum[this.flip++ % f.enum.length];
        if (f.format === 'byte')
          return Buffer.from(`bytes of ${prop} \u0000\u00ff`, 'latin1').toString('base64');
        return this.alt() ? `${prop}-value` : `${prop} ü 日本 😀 ${'long '.repeat(10)}`;
      case 'integer':
        if (f.format === 'int64') return this.alt() ? 2 ** 40 + 5 : -(2 ** 33) - 7;
        return this.alt() ? 42 : -3;
      case 'number':
        return this.alt() ? 1.5 : -0.25;
      case 'boolean':
        return this.alt();
      default:
        throw new Error(`fixture: unhandled field ${prop}: ${JSON.stringify(f)}`);
    }
  }
}

/** An object of a definition with every field filled (no apiVersion/kind). */
export function fixtureOf(definition: string, opts: FixtureOptions = { variant: 0 }): any {
  return new Gen(opts).definition(definition);
}
