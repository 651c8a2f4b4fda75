// Codecs for the messages whose JSON form is not an object of their fields
// (see Special in protobuf-plan.ts). Field numbers come from the facts by name.
import { fieldNumber, type MessagePlan } from './protobuf-plan';
import { ProtobufError, Reader, tagBytes, type Writer } from './protobuf-wire';
import { stringifyJSON } from './json-text';

/** One message's codec: e writes the message body (no tag, no length), d reads [r.pos, end). */
export interface Codec {
  e(w: Writer, v: unknown): void;
  d(r: Reader, end: number): unknown;
}

export function badValue(where: string, want: string, v: unknown): never {
  const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  throw new ProtobufError(`protobuf: ${where}: expected ${want}, got ${got}`);
}

const tagNum = (n: number, wireType: number) => n * 8 + wireType;

/** Reads a tag inside a special message. */
function nextTag(r: Reader): number {
  const t = r.buf[r.pos++];
  return t > 127 ? r.tag(t) : t;
}

// ---- Time / MicroTime ------------------------------------------------------

const GO_ZERO_TIME = -62135596800; // 0001-01-01T00:00:00Z, Go's zero time.Time

function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

const pad2 = (n: number) => (n < 10 ? '0' + n : '' + n);

/** RFC 3339 in UTC; six fractional digits for MicroTime, none for Time (Go truncates). */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  if (nanos < 0 || nanos >= 1e9) {
    seconds += Math.floor(nanos / 1e9);
    nanos = ((nanos % 1e9) + 1e9) % 1e9;
  }
  const days = Math.floor(seconds / 86400);
  let rem = seconds - days * 86400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const hh = Math.floor(rem / 3600);
  rem -= hh * 3600;
  const mm = Math.floor(rem / 60);
  const ss = rem - mm * 60;
  const ys = y >= 0 && y < 10000 ? String(y).padStart(4, '0') : String(y);
  const base = `${ys}-${pad2(m)}-${pad2(d)}T${pad2(hh)}:${pad2(mm)}:${pad2(ss)}`;
  if (!micro) return base + 'Z';
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

const TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Parses RFC 3339 into Unix seconds and nanoseconds. */
export function parseTime(s: string, where: string): [number, number] {
  const m = TIME_RE.exec(s);
  if (!m) throw new ProtobufError(`protobuf: ${where}: invalid RFC 3339 time ${JSON.stringify(s)}`);
  const y = +m[1];
  const mo = +m[2];
  const d = +m[3];
  const hh = +m[4];
  const mi = +m[5];
  const ss = +m[6];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (
    mo < 1 ||
    mo > 12 ||
    d < 1 ||
    d > (mo === 2 && !leap ? 28 : DAYS_IN_MONTH[mo - 1]) ||
    hh > 23 ||
    mi > 59 ||
    ss > 59
  ) {
    throw new ProtobufError(`protobuf: ${where}: time out of range ${JSON.stringify(s)}`);
  }
  let seconds = daysFromCivil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss;
  if (m[9]) seconds -= (m[9] === '-' ? -1 : 1) * (+m[10] * 3600 + +m[11] * 60);
  const nanos = m[7] ? +m[7].padEnd(9, '0') : 0;
  return [seconds, nanos];
}

function timeCodec(p: MessagePlan, micro: boolean): Codec {
  const tSec = tagBytes(fieldNumber(p.name, 'seconds'), 0);
  const tNan = tagBytes(fieldNumber(p.name, 'nanos'), 0);
  const sec = tagNum(fieldNumber(p.name, 'seconds'), 0);
  const nan = tagNum(fieldNumber(p.name, 'nanos'), 0);
  const cache = new Map<string, [number, number]>();
  const formatted = new Map<number, string>();
  return {
    e(w, v) {
      if (v === null || v === undefined || v === '') return; // zero time: an empty message, like Go
      if (typeof v !== 'string') badValue(p.label, 'RFC 3339 string', v);
      let t = cache.get(v);
      if (!t) {
        t = parseTime(v, p.label);
        if (cache.size > 4096) cache.clear();
        cache.set(v, t);
      }
      if (t[0] === GO_ZERO_TIME && t[1] === 0) return;
      // Go writes both fields of a non-zero time, nanos 0 included.
      w.bytes(tSec);
      w.i64(t[0]);
      w.bytes(tNan);
      w.i32(t[1]);
    },
    d(r, end) {
      if (r.pos === end) return null; // Go's zero time; its JSON is null
      let seconds = 0;
      let nanos = 0;
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === sec) seconds = Number(r.i64());
        else if (t === nan) nanos = r.i32();
        else r.skip(t, end);
      }
      r.done(end);
      if (micro) return formatTime(seconds, nanos, true);
      // Lists repeat timestamps; formatting is the costly part.
      let s = formatted.get(seconds);
      if (s === undefined) {
        s = formatTime(seconds, 0, false);
        if (formatted.size > 4096) formatted.clear();
        formatted.set(seconds, s);
      }
      return s;
    },
  };
}

// ---- Quantity, IntOrString, string lists -----------------------------------

function quantityCodec(p: MessagePlan): Codec {
  const f = p.proto.fields.find((x) => x.type === 'string');
  if (!f) throw new Error(`protobuf: ${p.name} has no string field`);
  const tag = tagBytes(f.n, 2);
  const T = tagNum(f.n, 2);
  return {
    e(w, v) {
      if (v === null || v === undefined) v = '0';
      else if (typeof v === 'number') v = String(v);
      else if (typeof v !== 'string') badValue(p.label, 'quantity string', v);
      w.bytes(tag);
      w.str(v as string);
    },
    d(r, end) {
      let s = '0';
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === T) s = r.str(end);
        else r.skip(t, end);
      }
      r.done(end);
      return s;
    },
  };
}

function intOrStringCodec(p: MessagePlan): Codec {
  const tType = tagBytes(fieldNumber(p.name, 'type'), 0);
  const tInt = tagBytes(fieldNumber(p.name, 'intVal'), 0);
  const tStr = tagBytes(fieldNumber(p.name, 'strVal'), 2);
  const TT = tagNum(fieldNumber(p.name, 'type'), 0);
  const TI = tagNum(fieldNumber(p.name, 'intVal'), 0);
  const TS = tagNum(fieldNumber(p.name, 'strVal'), 2);
  return {
    e(w, v) {
      // Go writes all three fields whichever alternative is set.
      if (typeof v === 'string') {
        w.bytes(tType);
        w.u32(1);
        w.bytes(tInt);
        w.u32(0);
        w.bytes(tStr);
        w.str(v);
        return;
      }
      if (v === null || v === undefined) v = 0;
      if (typeof v !== 'number' || (v | 0) !== v) badValue(p.label, 'int32 or string', v);
      w.bytes(tType);
      w.u32(0);
      w.bytes(tInt);
      w.i32(v as number);
      w.bytes(tStr);
      w.u32(0);
    },
    d(r, end) {
      let type = 0;
      let i = 0;
      let s = '';
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === TT) type = Number(r.i64());
        else if (t === TI) i = r.i32();
        else if (t === TS) s = r.str(end);
        else r.skip(t, end);
      }
      r.done(end);
      return type === 1 ? s : i;
    },
  };
}

function stringListCodec(p: MessagePlan): Codec {
  const tag = tagBytes(p.proto.fields[0].n, 2);
  const T = tagNum(p.proto.fields[0].n, 2);
  return {
    e(w, v) {
      if (v === null || v === undefined) return;
      if (!Array.isArray(v)) badValue(p.label, 'array of strings', v);
      for (const s of v as unknown[]) {
        if (s !== null && typeof s !== 'string') badValue(p.label, 'string', s);
        w.bytes(tag);
        w.str((s as string | null) ?? '');
      }
    },
    d(r, end) {
      const out: string[] = [];
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === T) out.push(r.str(end));
        else r.skip(t, end);
      }
      r.done(end);
      return out;
    },
  };
}

// ---- Embedded JSON ---------------------------------------------------------

export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Set by protobuf.ts: decodes an enveloped object found inside a RawExtension. */
export const hooks: { decodeEnvelope?: (b: Buffer) => unknown } = {};

function jsonCodec(p: MessagePlan): Codec {
  const tag = tagBytes(p.proto.fields[0].n, 2);
  const T = tagNum(p.proto.fields[0].n, 2);
  return {
    e(w, v) {
      if (v === null || v === undefined) return;
      const s = stringifyJSON(v);
      if (s === undefined) badValue(p.label, 'JSON value', v);
      w.bytes(tag);
      w.str(s);
    },
    d(r, end) {
      let start = -1;
      let stop = -1;
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === T) {
          stop = r.sub(end);
          start = r.pos;
          r.pos = stop;
        } else r.skip(t, end);
      }
      r.done(end);
      if (start < 0 || start === stop) return null;
      const b = r.buf;
      if (
        stop - start >= 4 &&
        b[start] === MAGIC[0] &&
        b[start + 1] === MAGIC[1] &&
        b[start + 2] === MAGIC[2] &&
        b[start + 3] === MAGIC[3]
      ) {
        if (!hooks.decodeEnvelope) throw new ProtobufError('protobuf: envelope decoder not loaded');
        return hooks.decodeEnvelope(b.subarray(start, stop));
      }
      try {
        return JSON.parse(b.toString('utf8', start, stop));
      } catch {
        throw new ProtobufError(`protobuf: ${p.label}: raw bytes are neither JSON nor an enveloped object`);
      }
    },
  };
}

// ---- JSONSchemaPropsOrBool / OrArray / OrStringArray -----------------------

function unionCodec(p: MessagePlan, codecOf: (message: string) => Codec): Codec {
  const fields = [...p.proto.fields].sort((a, b) => a.n - b.n);
  const boolF = fields.find((f) => f.type === 'bool' && !f.repeated);
  const objF = fields.find((f) => f.type.includes('.') && !f.repeated);
  const listF = fields.find((f) => f.repeated);
  const tBool = boolF && tagBytes(boolF.n, 0);
  const tObj = objF && tagBytes(objF.n, 2);
  const tList = listF && tagBytes(listF.n, 2);
  const TB = boolF ? tagNum(boolF.n, 0) : -1;
  const TO = objF ? tagNum(objF.n, 2) : -1;
  const TL = listF ? tagNum(listF.n, 2) : -1;
  const writeObj = (w: Writer, v: unknown) => {
    w.bytes(tObj!);
    const s = w.begin();
    codecOf(objF!.type).e(w, v);
    w.end(s);
  };
  return {
    e(w, v) {
      if (v === null || v === undefined) return;
      if (typeof v === 'boolean' && tBool) {
        w.bytes(tBool);
        w.u32(v ? 1 : 0);
      } else if (Array.isArray(v) && tList) {
        for (const x of v) {
          w.bytes(tList);
          if (listF!.type === 'string') {
            if (typeof x !== 'string') badValue(p.label, 'string', x);
            w.str(x);
          } else {
            const s = w.begin();
            codecOf(listF!.type).e(w, x);
            w.end(s);
          }
        }
      } else if (typeof v === 'object' && !Array.isArray(v) && tObj) {
        // Go sets the bool alternative too when a schema is given.
        for (const f of fields) {
          if (f === boolF) {
            w.bytes(tBool!);
            w.u32(1);
          } else if (f === objF) writeObj(w, v);
        }
      } else badValue(p.label, 'schema, bool or array', v);
    },
    d(r, end) {
      let flag: boolean | undefined;
      let obj: unknown;
      let list: unknown[] | undefined;
      while (r.pos < end) {
        const t = nextTag(r);
        if (t === TB) flag = r.bool();
        else if (t === TO) {
          const e = r.sub(end);
          obj = codecOf(objF!.type).d(r, e);
        } else if (t === TL) {
          if (listF!.type === 'string') (list ??= []).push(r.str(end));
          else {
            const e = r.sub(end);
            (list ??= []).push(codecOf(listF!.type).d(r, e));
          }
        } else r.skip(t, end);
      }
      r.done(end);
      if (obj !== undefined) return obj;
      if (list) return list;
      return flag ?? null;
    },
  };
}

export function specialCodec(p: MessagePlan, codecOf: (message: string) => Codec): Codec {
  switch (p.special) {
    case 'time':
      return timeCodec(p, false);
    case 'microtime':
      return timeCodec(p, true);
    case 'quantity':
      return quantityCodec(p);
    case 'intorstring':
      return intOrStringCodec(p);
    case 'stringlist':
      return stringListCodec(p);
    case 'json':
      return jsonCodec(p);
    case 'union':
      return unionCodec(p, codecOf);
    default:
      throw new Error(`protobuf: ${p.name} is not special`);
  }
}
