// cel-go's two-variable comprehensions (ext.TwoVarComprehensions(), on in Kubernetes
// since 1.32): all, exists and existsOne over (index, value) of a list or (key, value)
// of a map, and transformList, transformMap and transformMapEntry, each with an
// optional filter.
import type { Environment } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import {
  boundName,
  markSync,
  type Checker,
  type CheckedType,
  type Context,
  type Evaluator,
  type Node,
} from './macro';

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

export function registerComprehensions(env: Environment): void {
  for (const receiver of ['list', 'map']) {
    env.registerFunction(`${receiver}.all(ast, ast, ast): bool`, macro('all', false));
    env.registerFunction(`${receiver}.exists(ast, ast, ast): bool`, macro('exists', false));
    env.registerFunction(`${receiver}.existsOne(ast, ast, ast): bool`, macro('existsOne', false));
    for (const kind of ['transformList', 'transformMap', 'transformMapEntry'] as const) {
      const result = kind === 'transformList' ? 'list<dyn>' : 'map<dyn, dyn>';
      env.registerFunction(`${receiver}.${kind}(ast, ast, ast): ${result}`, macro(kind, false));
      env.registerFunction(`${receiver}.${kind}(ast, ast, ast, ast): ${result}`, macro(kind, true));
    }
  }
}

/** A map's keys come back from the engine as strings; the checked key type says what they were. */
function keyOf(k: string, keyType: string): unknown {
  if (keyType === 'int') return BigInt(k);
  if (keyType === 'uint') return new UnsignedInt(BigInt(k));
  if (keyType === 'bool') return k === 'true';
  return k;
}

function macro(kind: Kind, filtered: boolean) {
  const desc = `${kind}(${filtered ? 'k, v, filter, expr' : kind.startsWith('transform') ? 'k, v, expr' : 'k, v, predicate'})`;
  return ({ ast, args, receiver }: { ast: Node; args: Node[]; receiver: Node }) => {
    const [first, second] = args;
    const filter = filtered ? args[2] : undefined;
    const body = args[args.length - 1];
    let firstCtx: Context | undefined;
    let secondCtx: Context | undefined;
    let keyType = 'dyn';
    return {
      typeCheck(checker: Checker, _m: unknown, ctx: Context): CheckedType {
        const [firstName, secondName] = [first, second].map((v) => boundName(checker, v, desc));
        if (firstName === secondName)
          throw checker.createError('invalid_macro_argument', `${desc} variable names must differ`, second);
        const rt = checker.check(receiver, ctx);
        const dyn = checker.getType('dyn');
        // The elements of an empty literal ([], {}) have no type yet: dyn, as in cel-go.
        const known = (t: CheckedType | undefined) => (t && !t.hasPlaceholderType ? t : dyn);
        let kt = dyn;
        let vt = dyn;
        if (rt.kind === 'list') {
          kt = checker.getType('int');
          vt = known(rt.valueType);
        } else if (rt.kind === 'map') {
          kt = known(rt.keyType);
          vt = known(rt.valueType);
        } else if (rt.kind !== 'dyn')
          throw checker.createError(
            'invalid_argument',
            `${desc} receiver must be a list or a map, got '${rt}'`,
            receiver,
          );
        keyType = String(kt.name ?? kt.kind);
        firstCtx = ctx.forkWithVariable(firstName, kt);
        secondCtx = firstCtx.forkWithVariable(secondName, vt);
        const mustBeBool = (n: Node, what: string) => {
          const t = checker.check(n, secondCtx!);
          if (t.kind !== 'dyn' && t.name !== 'bool')
            throw checker.createError('invalid_argument', `${desc} ${what} must return bool, got '${t}'`, n);
        };
        if (filter) mustBeBool(filter, 'filter');
        let result: CheckedType;
        if (!kind.startsWith('transform')) {
          mustBeBool(body, 'predicate');
          result = checker.getType('bool');
        } else {
          const bt = checker.check(body, secondCtx);
          if (kind === 'transformMapEntry' && bt.kind !== 'map' && bt.kind !== 'dyn')
            throw checker.createError(
              'invalid_argument',
              `${desc} expression must return a map, got '${bt}'`,
              body,
            );
          result = checker.getType(kind === 'transformList' ? 'list' : 'map');
        }
        markSync(ast, [receiver, ...args]);
        return result;
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: Context): unknown {
        const r = ev.run(receiver, ctx);
        let entries: [unknown, unknown][];
        if (Array.isArray(r)) entries = r.map((v, i) => [BigInt(i), v]);
        else if (r instanceof Map) entries = [...r];
        else if (r !== null && typeof r === 'object')
          entries = Object.entries(r).map(([k, v]) => [keyOf(k, keyType), v]);
        else throw new Error(`${desc} receiver must be a list or a map`);
        const run = (n: Node, k: unknown, v: unknown): unknown => {
          const inner = secondCtx!.reuse(firstCtx!.reuse(ctx).setIterValue(k, ev)).setIterValue(v, ev);
          const out = ev.run(n, inner);
          if (out instanceof Promise) throw new Error(`${desc} does not take asynchronous expressions`);
          return out;
        };
        return reduce(kind, entries, run, filter, body);
      },
    };
  };
}

/** The comprehension itself, with cel-go's handling of errors in all and exists (a decided result wins). */
function reduce(
  kind: Kind,
  entries: [unknown, unknown][],
  run: (n: Node, k: unknown, v: unknown) => unknown,
  filter: Node | undefined,
  body: Node,
): unknown {
  if (kind === 'all' || kind === 'exists') {
    const decided = kind === 'exists';
    let error: unknown;
    for (const [k, v] of entries) {
      try {
        if (run(body, k, v) === decided) return decided;
      } catch (e) {
        error ??= e;
      }
    }
    if (error) throw error;
    return !decided;
  }
  if (kind === 'existsOne') {
    let n = 0;
    for (const [k, v] of entries) if (run(body, k, v) === true) n++;
    return n === 1;
  }
  const kept = filter ? entries.filter(([k, v]) => run(filter, k, v) === true) : entries;
  if (kind === 'transformList') return kept.map(([k, v]) => run(body, k, v));
  const out = new Map<unknown, unknown>();
  for (const [k, v] of kept) {
    if (kind === 'transformMap') {
      out.set(k, run(body, k, v));
      continue;
    }
    const entry = run(body, k, v);
    const pairs = entry instanceof Map ? [...entry] : Object.entries(entry as object);
    for (const [ek, evalue] of pairs) {
      if (out.has(ek)) throw new Error(`insert failed: key ${String(ek)} already exists`);
      out.set(ek, evalue);
    }
  }
  return out;
}
