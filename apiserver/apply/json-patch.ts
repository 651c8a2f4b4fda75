// JSON patch (RFC 6902) with the semantics of gopkg.in/evanphx/json-patch.v4,
// which kube-apiserver uses, and its answers: a body that does not decode is
// 400 BadRequest, more than 10000 operations is 413, and any operation that
// fails (test, missing path, bad index, unknown op) is 422 with a fixed message.
import { StatusError, badRequest } from '../../shared/api/status';
import { isObject } from './json-util';
import { jsonClone, jsonEqual } from '../../shared/api/json-value';
import { parseJSONInt64 } from '../../shared/codec/json-int64';

export interface JSONPatchOperation {
  op: string;
  path?: string;
  from?: string;
  value?: unknown;
}

export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** An operation failed; kube-apiserver reports these as 422 without the detail. */
export class JSONPatchError extends Error {
  override name = 'JSONPatchError';
}

/** 422 as NewGenericServerResponse builds it: the cause is not passed on. */
export const jsonPatchFailed = () =>
  new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});

const goType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;

/** Decodes a JSON patch document, answering 400/413 like kube-apiserver. */
export function parseJSONPatch(body: string | Uint8Array | unknown): JSONPatchOperation[] {
  let doc: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    try {
      doc = parseJSONInt64(text);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
  }
  if (doc === null) doc = [];
  if (!Array.isArray(doc)) {
    throw badRequest(`json: cannot unmarshal ${goType(doc)} into Go value of type jsonpatch.Patch`);
  }
  for (const op of doc) {
    if (op !== null && !isObject(op)) {
      throw badRequest(`json: cannot unmarshal ${goType(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (doc.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new StatusError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${doc.length}`,
    );
  }
  return doc.map((op) => (op ?? {}) as JSONPatchOperation);
}

/** Splits a JSON pointer into unescaped tokens ("" is the whole document). */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JSONPatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

/** Parses an array index like Go's strconv.Atoi, with negative indices counted from the end. */
function arrayIndex(token: string, length: number, forAdd: boolean): number {
  if (!/^[+-]?\d+$/.test(token)) throw new JSONPatchError(`invalid array index ${token}`);
  let i = Number(token);
  if (i < 0) {
    if (i < -length) throw new JSONPatchError(`Unable to access invalid index: ${i}`);
    i += length;
  }
  if (forAdd ? i > length : i >= length) throw new JSONPatchError(`Unable to access invalid index: ${i}`);
  return i;
}

/** The container holding the last token of the path, or undefined when the path is missing. */
function parentOf(doc: unknown, tokens: string[]): Container | undefined {
  let cur: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i];
    if (Array.isArray(cur)) {
      if (!/^[+-]?\d+$/.test(t)) return undefined;
      let idx = Number(t);
      if (idx < 0) idx += cur.length;
      if (idx < 0 || idx >= cur.length) return undefined;
      cur = cur[idx];
    } else if (isObject(cur)) {
      if (!Object.prototype.hasOwnProperty.call(cur, t)) return undefined;
      cur = cur[t];
    } else {
      return undefined;
    }
  }
  return Array.isArray(cur) || isObject(cur) ? cur : undefined;
}

function getAt(c: Container, key: string): { found: boolean; value: unknown } {
  if (Array.isArray(c)) {
    const i = arrayIndex(key, c.length, false);
    return { found: true, value: c[i] };
  }
  return Object.prototype.hasOwnProperty.call(c, key)
    ? { found: true, value: c[key] }
    : { found: false, value: undefined };
}

interface State {
  doc: unknown;
}

function add(s: State, path: string, value: unknown): void {
  const tokens = parsePointer(path);
  if (tokens.length === 0) {
    s.doc = value;
    return;
  }
  const parent = parentOf(s.doc, tokens);
  const key = tokens[tokens.length - 1];
  if (!parent) throw new JSONPatchError(`add operation does not apply: doc is missing path: "${path}"`);
  if (Array.isArray(parent)) {
    if (key === '-') parent.push(value);
    else parent.splice(arrayIndex(key, parent.length, true), 0, value);
  } else {
    parent[key] = value;
  }
}

function remove(s: State, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw new JSONPatchError('unable to remove the whole document');
  const parent = parentOf(s.doc, tokens);
  const key = tokens[tokens.length - 1];
  if (!parent) throw new JSONPatchError(`remove operation does not apply: doc is missing path: "${path}"`);
  if (Array.isArray(parent)) {
    const i = arrayIndex(key, parent.length, false);
    return parent.splice(i, 1)[0];
  }
  if (!Object.prototype.hasOwnProperty.call(parent, key)) {
    throw new JSONPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  }
  const old = parent[key];
  delete parent[key];
  return old;
}

function replace(s: State, path: string, value: unknown): void {
  const tokens = parsePointer(path);
  if (tokens.length === 0) {
    s.doc = value;
    return;
  }
  const parent = parentOf(s.doc, tokens);
  const key = tokens[tokens.length - 1];
  if (!parent) throw new JSONPatchError(`replace operation does not apply: doc is missing path: ${path}`);
  if (Array.isArray(parent)) {
    parent[arrayIndex(key, parent.length, false)] = value;
    return;
  }
  if (!Object.prototype.hasOwnProperty.call(parent, key)) {
    throw new JSONPatchError(`replace operation does not apply: doc is missing key: ${path}: missing value`);
  }
  parent[key] = value;
}

function get(s: State, path: string): { found: boolean; value: unknown } {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return { found: true, value: s.doc };
  const parent = parentOf(s.doc, tokens);
  if (!parent) return { found: false, value: undefined };
  return getAt(parent, tokens[tokens.length - 1]);
}

function need(op: JSONPatchOperation, field: 'path' | 'from'): string {
  const v = op[field];
  if (typeof v !== 'string') throw new JSONPatchError(`operation missing ${field} field`);
  return v;
}

function needValue(op: JSONPatchOperation): unknown {
  if (!Object.prototype.hasOwnProperty.call(op, 'value'))
    throw new JSONPatchError('operation missing value field');
  return op.value;
}

/** Applies the operations in order to a copy of `doc`; throws JSONPatchError when one fails. */
export function applyJSONPatchOps(doc: unknown, ops: JSONPatchOperation[], copy = true): unknown {
  const s: State = { doc: copy ? jsonClone(doc) : doc };
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        add(s, need(op, 'path'), jsonClone(needValue(op)));
        break;
      case 'remove':
        remove(s, need(op, 'path'));
        break;
      case 'replace':
        replace(s, need(op, 'path'), jsonClone(needValue(op)));
        break;
      case 'move': {
        const from = need(op, 'from');
        const path = need(op, 'path');
        if (path !== from && path.startsWith(from + '/')) {
          throw new JSONPatchError(`move operation cannot move a value into one of its children: ${from}`);
        }
        const got = get(s, from);
        if (!got.found)
          throw new JSONPatchError(`move operation does not apply: doc is missing from path: ${from}`);
        const v = remove(s, from);
        add(s, path, v);
        break;
      }
      case 'copy': {
        const from = need(op, 'from');
        const got = get(s, from);
        if (!got.found)
          throw new JSONPatchError(`copy operation does not apply: doc is missing from path: ${from}`);
        add(s, need(op, 'path'), jsonClone(got.value));
        break;
      }
      case 'test': {
        const path = need(op, 'path');
        const tokens = parsePointer(path);
        if (tokens.length > 0 && !parentOf(s.doc, tokens)) {
          throw new JSONPatchError(`test operation does not apply: is missing path: ${path}`);
        }
        const got = get(s, path);
        const want = op.value;
        // evanphx/json-patch v4: a missing value equals an absent or null expectation.
        if (!got.found || got.value === null) {
          if (want === undefined || want === null) break;
          throw new JSONPatchError(`testing value ${path} failed: test failed`);
        }
        if (!jsonEqual(got.value, want))
          throw new JSONPatchError(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw new JSONPatchError(`Unexpected kind: ${op.op ?? 'unknown'}`);
    }
  }
  return s.doc;
}

/** Parses and applies a JSON patch body to a copy of `doc`, answering like kube-apiserver. */
export function applyJSONPatch(doc: unknown, body: string | Uint8Array | unknown): unknown {
  const ops = parseJSONPatch(body);
  try {
    return applyJSONPatchOps(doc, ops);
  } catch (e) {
    if (e instanceof JSONPatchError) throw jsonPatchFailed();
    throw e;
  }
}
