// The CEL conformance suite (cel-spec's simple tests, shipped as data by
// @bufbuild/cel-spec) run against the engine with Kubernetes' options: the
// sections of the language Kubernetes uses. Tests of protobuf messages,
// enums, wrappers, unknowns and extensions Kubernetes does not enable are
// left out; the engine's known gaps, and the cases where Kubernetes answers
// otherwise than the spec, are listed in conformance-gaps.json.
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { newEnvironment } from './engine';

export interface ConformanceCase {
  name: string;
  expr: string;
  run(): { ok: boolean; got: string };
}

const SECTIONS = [
  'basic',
  'bindings_ext',
  'comparisons',
  'conversions',
  'fields',
  'fp_math',
  'integer_math',
  'lists',
  'logic',
  'macros',
  'macros2',
  'optionals',
  'parse',
  'string',
  'string_ext',
  'timestamps',
];

type Json = Record<string, any>;

function toJs(v: Json): unknown {
  if ('int64Value' in v) return BigInt(v.int64Value);
  if ('uint64Value' in v) return new UnsignedInt(BigInt(v.uint64Value));
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('nullValue' in v) return null;
  if ('bytesValue' in v) return new Uint8Array(Buffer.from(v.bytesValue, 'base64'));
  if ('listValue' in v) return (v.listValue.values ?? []).map(toJs);
  if ('mapValue' in v)
    return new Map((v.mapValue.entries ?? []).map((e: Json) => [toJs(e.key), toJs(e.value)]));
  throw new Error(`unsupported value ${Object.keys(v).join()}`);
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof UnsignedInt && b instanceof UnsignedInt) return a.valueOf() === b.valueOf();
  if (typeof a === 'number' && typeof b === 'number') return (Number.isNaN(a) && Number.isNaN(b)) || a === b;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (b instanceof Map) {
    const ents = a instanceof Map ? [...a] : a && typeof a === 'object' ? Object.entries(a) : undefined;
    if (!ents || ents.length !== b.size) return false;
    return ents.every(([k, v]) => [...b].some(([k2, v2]) => same(k, k2) && same(v, v2)));
  }
  return a === b;
}

const UNSUPPORTED = /objectValue|typeValue|enumValue|"unknown"|anyUnknowns/;

/** The applicable cases, grouped as section/suite/name. */
export function conformanceCases(): ConformanceCase[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { tests } = require('@bufbuild/cel-spec/testdata/conformance.js') as { tests: Json };
  const out: ConformanceCase[] = [];
  const walk = (s: Json, path: string) => {
    for (const t of s.tests ?? []) {
      const o = t.original as Json;
      if (o.container || o.typeEnv || UNSUPPORTED.test(JSON.stringify(o))) continue;
      out.push({
        name: `${path}/${o.name ?? o.expr}`,
        expr: o.expr,
        run() {
          const env = newEnvironment().clone({
            enableOptionalTypes: true,
            unlistedVariablesAreDyn: true,
            homogeneousAggregateLiterals: false,
          });
          const vars: Record<string, unknown> = {};
          for (const [k, b] of Object.entries((o.bindings ?? {}) as Json)) vars[k] = toJs(b.value);
          let got: unknown;
          let err: unknown;
          try {
            got = env.evaluate(o.expr, vars);
          } catch (e) {
            err = e;
          }
          const shown = err ? String((err as Error).message).split('\n')[0] : String(got);
          if (o.evalError || o.anyEvalErrors) return { ok: !!err, got: shown };
          if (o.value) return { ok: !err && same(got, toJs(o.value)), got: shown };
          return { ok: !err && got === true, got: shown };
        },
      });
    }
    for (const c of s.suites ?? []) walk(c, `${path}/${c.name}`);
  };
  for (const s of tests.suites as Json[]) if (SECTIONS.includes(s.name)) walk(s, s.name);
  return out;
}
