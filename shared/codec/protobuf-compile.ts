// Compiles one encoder and one decoder per proto message, on first use, as
// generated JavaScript: static property names and inlined tags let V8 keep
// every field access monomorphic, with no per-field lookup at run time.
import {
  omittedWhenZero,
  planOf,
  PROTO_SCALARS,
  type Entry,
  type FieldPlan,
  type MessagePlan,
} from './protobuf-plan';
import { badValue, specialCodec, type Codec } from './protobuf-special';
import { compareKeys, MAX_DEPTH, setKey, tagBytes, type Reader } from './protobuf-wire';

export interface StructCodec extends Codec {
  /** Decodes the message's fields into an existing object. */
  into(r: Reader, end: number, o: Record<string, unknown>): void;
  /** into() for a nested message: counts nesting depth. */
  m(r: Reader, end: number, o: Record<string, unknown>): void;
}

const codecs = new Map<string, Codec>();

/** The codec of a proto message (compiled lazily; recursive messages are fine). */
export function codecOf(message: string): Codec {
  let c = codecs.get(message);
  if (c) return c;
  const plan = planOf(message);
  if (plan.special) c = specialCodec(plan, codecOf);
  else {
    const holder: StructCodec = {
      e(w, v) {
        compile(holder, plan);
        holder.e(w, v);
      },
      d(r, end) {
        compile(holder, plan);
        return holder.d(r, end);
      },
      into(r, end, o) {
        compile(holder, plan);
        holder.into(r, end, o);
      },
      m(r, end, o) {
        compile(holder, plan);
        holder.m(r, end, o);
      },
    };
    c = holder;
  }
  codecs.set(message, c);
  return c;
}

export function structCodecOf(message: string): StructCodec {
  const c = codecOf(message);
  if (!('into' in c)) throw new Error(`protobuf: ${message} is not a struct message`);
  return c as StructCodec;
}

const runtime = {
  bad: badValue,
  cmp: compareKeys,
  setKey,
  b64: (s: string) => Buffer.from(s, 'base64'),
};

const NULL_AS_EMPTY = new Set(['time', 'microtime', 'json']);

const isScalar = (t: string) => PROTO_SCALARS.has(t);

function wireType(t: string): number {
  if (!isScalar(t) || t === 'string' || t === 'bytes') return 2;
  return t === 'double' ? 1 : 0;
}

function emitTag(bytes: number[]): string {
  if (bytes.length === 1) return `w.b1(${bytes[0]});`;
  if (bytes.length === 2) return `w.b2(${bytes[0]},${bytes[1]});`;
  return `w.bytes([${bytes.join(',')}]);`;
}

class Gen {
  readonly refs: Codec[] = [];
  private readonly refIdx = new Map<string, string>();
  readonly helpers: string[] = [];
  private uid = 0;

  constructor(readonly plan: MessagePlan) {}

  ref(message: string): string {
    let name = this.refIdx.get(message);
    if (!name) {
      name = `H${this.refs.length}`;
      this.refs.push(codecOf(message));
      this.refIdx.set(message, name);
    }
    return name;
  }

  id(prefix: string): string {
    return `${prefix}${this.uid++}`;
  }

  label(f: FieldPlan): string {
    return JSON.stringify(`${this.plan.label}.${f.json}`);
  }

  // ---- encoding ----

  /** Writes tag + value of one element held in variable x. */
  encElem(f: FieldPlan, type: string, tag: number[], x: string, orZero: boolean): string {
    const L = this.label(f);
    const T = emitTag(tag);
    if (!isScalar(type)) {
      const H = this.ref(type);
      const s = this.id('s');
      return `${T} const ${s} = w.begin(); ${H}.e(w, ${x}); w.end(${s});`;
    }
    let check: string;
    let write: string;
    let zero = 'w.b1(0);';
    switch (type) {
      case 'string':
        check = `typeof ${x} !== "string"`;
        write = `w.str(${x});`;
        break;
      case 'bytes':
        check = `typeof ${x} !== "string"`;
        write = `w.blob(R.b64(${x}));`;
        break;
      case 'bool':
        check = `typeof ${x} !== "boolean"`;
        write = `w.b1(${x} ? 1 : 0);`;
        break;
      case 'int32':
        check = `(${x} | 0) !== ${x}`;
        write = `w.i32(${x});`;
        break;
      case 'uint32':
        check = `(${x} >>> 0) !== ${x}`;
        write = `w.u32(${x});`;
        break;
      case 'int64':
      case 'uint64':
        check = `typeof ${x} === "bigint" ? BigInt.asIntN(64, ${x}) !== ${x} : typeof ${x} !== "number" || !Number.isInteger(${x})`;
        write = `w.i64(${x});`;
        break;
      case 'double':
        check = `typeof ${x} !== "number"`;
        write = `w.f64(${x});`;
        zero = 'w.f64(0);';
        break;
      default:
        throw new Error(`protobuf: unsupported scalar ${type}`);
    }
    const body = `if (${check}) R.bad(${L}, ${JSON.stringify(type)}, ${x}); ${T} ${write}`;
    return orZero ? `if (${x} === null || ${x} === undefined) { ${T} ${zero} } else { ${body} }` : body;
  }

  encField(f: FieldPlan, obj: string): string {
    const x = this.id('x');
    const L = this.label(f);
    const head = `const ${x} = ${obj}[${JSON.stringify(f.json)}];`;
    if (f.map) {
      const vt = wireType(f.type);
      const ks = this.id('k');
      const i = this.id('i');
      const y = this.id('y');
      const s = this.id('s');
      return `{ ${head} if (${x} !== undefined && ${x} !== null) {
        if (typeof ${x} !== "object" || Array.isArray(${x})) R.bad(${L}, "object", ${x});
        const ${ks} = Object.keys(${x}); if (${ks}.length > 1) ${ks}.sort(R.cmp);
        for (let ${i} = 0; ${i} < ${ks}.length; ${i}++) {
          const ${y} = ${x}[${ks}[${i}]];
          ${emitTag(tagBytes(f.n, 2))} const ${s} = w.begin(); w.b1(10); w.str(${ks}[${i}]);
          ${this.encElem(f, f.type, tagBytes(2, vt), y, true)}
          w.end(${s});
        } } }`;
    }
    const tag = tagBytes(f.n, wireType(f.type));
    if (f.repeated) {
      const i = this.id('i');
      const y = this.id('y');
      return `{ ${head} if (${x} !== undefined && ${x} !== null) {
        if (!Array.isArray(${x})) R.bad(${L}, "array", ${x});
        for (let ${i} = 0; ${i} < ${x}.length; ${i}++) { const ${y} = ${x}[${i}]; ${this.encElem(f, f.type, tag, y, true)} } } }`;
    }
    const nullOk = !isScalar(f.type) && NULL_AS_EMPTY.has(planOf(f.type).special ?? '');
    const present = nullOk ? `${x} !== undefined` : `${x} !== undefined && ${x} !== null`;
    return `{ ${head} if (${present}) { ${this.encElem(f, f.type, tag, x, false)} } }`;
  }

  encEntries(entries: Entry[], obj: string): string {
    let out = '';
    for (const e of entries) {
      if (e.kind === 'via') {
        // Go always writes an embedded struct, even when empty.
        const s = this.id('s');
        out += `${emitTag(tagBytes(e.n, 2))} const ${s} = w.begin(); ${this.encEntries(e.entries, obj)} w.end(${s});\n`;
      } else out += this.encField(e, obj) + '\n';
    }
    return out;
  }

  // ---- decoding ----

  readExpr(type: string, end: string): string {
    switch (type) {
      case 'string':
        return `r.str(${end})`;
      case 'bytes':
        return `r.base64(${end})`;
      case 'bool':
        return 'r.bool()';
      case 'int32':
        return 'r.i32()';
      case 'uint32':
        return 'r.u32()';
      case 'int64':
      case 'uint64':
        return 'r.i64()';
      case 'double':
        return `r.f64(${end})`;
      default:
        throw new Error(`protobuf: unsupported scalar ${type}`);
    }
  }

  /** Statements that read one element into variable y. */
  decElem(type: string, y: string, end: string): string {
    if (isScalar(type)) return `const ${y} = ${this.readExpr(type, end)};`;
    const e = this.id('e');
    return `const ${e} = r.sub(${end}); const ${y} = ${this.ref(type)}.d(r, ${e});`;
  }

  decField(f: FieldPlan): string {
    const key = JSON.stringify(f.json);
    const y = this.id('y');
    if (f.map) {
      const e = this.id('e');
      const t = this.id('t');
      const m = this.id('m');
      const vt = 2 * 8 + wireType(f.type);
      const zero = isScalar(f.type)
        ? f.type === 'string' || f.type === 'bytes'
          ? '""'
          : f.type === 'bool'
            ? 'false'
            : '0'
        : `${this.ref(f.type)}.d(r, r.pos)`;
      return `case ${f.n * 8 + 2}: {
        const ${e} = r.sub(end); let k = ""; let v;
        while (r.pos < ${e}) {
          let ${t} = b[r.pos++]; if (${t} > 127) ${t} = r.tag(${t});
          if (${t} === 10) k = r.str(${e});
          else if (${t} === ${vt}) { ${this.decElem(f.type, y, e)} v = ${y}; }
          else r.skip(${t}, ${e});
        }
        r.done(${e}); if (v === undefined) v = ${zero};
        let ${m} = o[${key}]; if (${m} === undefined) o[${key}] = ${m} = {};
        R.setKey(${m}, k, v); break; }`;
    }
    const wt = wireType(f.type);
    if (!f.repeated && !isScalar(f.type) && !planOf(f.type).special) {
      // A message field seen twice is merged, as proto (and Go) do.
      const e = this.id('e');
      return `case ${f.n * 8 + 2}: { const ${e} = r.sub(end); let ${y} = o[${key}]; if (${y} === undefined) o[${key}] = ${y} = {};
        ${this.ref(f.type)}.m(r, ${e}, ${y}); break; }`;
    }
    const store = f.repeated
      ? `{ const a = o[${key}]; if (a === undefined) o[${key}] = [${y}]; else a.push(${y}); }`
      : omittedWhenZero(this.plan.name, f.json)
        ? `if (${y} !== "" && ${y} !== 0 && ${y} !== false) o[${key}] = ${y};`
        : `o[${key}] = ${y};`;
    let out = `case ${f.n * 8 + wt}: { ${this.decElem(f.type, y, 'end')} ${store} break; }`;
    if (f.repeated && wt !== 2) {
      // Accept packed encoding of repeated numbers too.
      const e = this.id('e');
      out += `\ncase ${f.n * 8 + 2}: { const ${e} = r.sub(end); let a = o[${key}]; if (a === undefined) o[${key}] = a = [];
        while (r.pos < ${e}) a.push(${this.readExpr(f.type, e)}); r.done(${e}); break; }`;
    }
    return out;
  }

  /** A decoding function body for entries; via groups become helper functions decoding into the same object. */
  decFunction(name: string, entries: Entry[]): string {
    let cases = '';
    for (const e of entries) {
      if (e.kind === 'via') {
        const fn = this.id('via');
        this.helpers.push(this.decFunction(fn, e.entries));
        cases += `case ${e.n * 8 + 2}: { const e = r.sub(end); ${fn}(r, e, o); break; }\n`;
      } else cases += this.decField(e) + '\n';
    }
    return `function ${name}(r, end, o) {
      const b = r.buf;
      while (r.pos < end) {
        let t = b[r.pos++]; if (t > 127) t = r.tag(t);
        switch (t) {
          ${cases}
          default: r.skip(t, end);
        }
      }
      r.done(end);
    }`;
  }
}

const compiled = new WeakSet<StructCodec>();

function compile(holder: StructCodec, plan: MessagePlan): void {
  if (compiled.has(holder)) return;
  const g = new Gen(plan);
  const label = JSON.stringify(plan.label);
  const enc = `function e(w, v) {
    if (v === null || v === undefined) return;
    if (typeof v !== "object" || Array.isArray(v)) R.bad(${label}, "object", v);
    ${g.encEntries(plan.entries, 'v')}
  }`;
  const into = g.decFunction('into', plan.entries);
  const src = `"use strict";
    ${g.helpers.join('\n')}
    ${into}
    ${enc}
    function d(r, end) {
      if (++r.depth > MAX) r.fail("nesting too deep");
      const o = {};
      into(r, end, o);
      r.depth--;
      return o;
    }
    function m(r, end, o) {
      if (++r.depth > MAX) r.fail("nesting too deep");
      into(r, end, o);
      r.depth--;
    }
    return { e, d, into, m };`;
  const params = ['R', 'MAX', ...g.refs.map((_, i) => `H${i}`)];
  const factory = new Function(...params, src) as (...args: unknown[]) => StructCodec;
  const made = factory(runtime, MAX_DEPTH, ...g.refs);
  holder.e = made.e;
  holder.d = made.d;
  holder.into = made.into;
  holder.m = made.m;
  compiled.add(holder);
}

/** Compiles every message reachable from one (start-up warm-up, and tests). */
export function precompile(message: string, seen = new Set<string>()): void {
  if (seen.has(message)) return;
  seen.add(message);
  const plan = planOf(message);
  if (plan.special) {
    for (const f of plan.proto.fields) if (!isScalar(f.type) && f.type !== 'map') precompile(f.type, seen);
    return;
  }
  const c = structCodecOf(message);
  const walk = (entries: Entry[]) => {
    for (const e of entries) {
      if (e.kind === 'via') walk(e.entries);
      else if (!isScalar(e.type)) precompile(e.type, seen);
    }
  };
  walk(plan.entries);
  compile(c, plan);
}
