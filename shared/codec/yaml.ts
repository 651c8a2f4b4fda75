// YAML in and out the way Kubernetes does it (sigs.k8s.io/yaml over yaml.v2):
// - in: YAML 1.1 scalars (yes/no/on/off are booleans, 0755 is octal), timestamps
//   stay strings, maps become JSON objects with sorted keys (Go marshals maps
//   sorted), duplicate keys reported as `line 5: key "name" already set in map`;
// - out: see yaml-write.ts.
import { checkYAMLDepth } from './yaml-depth';
import type * as YAMLLib from 'yaml';
import type { Node, Pair, Tags } from 'yaml';
import { decodeFailure } from './json';

export interface ParseYAMLOptions {
  detectDuplicates?: boolean;
  /** Kind the endpoint decodes into; completes the error message like Kubernetes'. */
  kind?: string;
}

export interface ParsedYAML {
  value: unknown;
  /** yaml.v2 strict messages, one per duplicate key: `line 5: key "name" already set in map`. */
  duplicates: string[];
}

let lib: typeof YAMLLib | undefined;
/** The yaml package, loaded on the first YAML body: it costs ~60 ms at start-up. */
function yaml(): typeof YAMLLib {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (lib ??= require('yaml') as typeof YAMLLib);
}

const READ_DROP = new Set(['tag:yaml.org,2002:timestamp']);
// yaml.v2 leaves timestamps and sexagesimal numbers as strings when decoding into interface{}.
const readTags = (tags: Tags) =>
  tags.filter(
    (t) => typeof t !== 'object' || !(READ_DROP.has(t.tag) || ('format' in t && t.format === 'TIME')),
  );

export function parseYAML(buf: Buffer | string, opts: ParseYAMLOptions = {}): ParsedYAML {
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  try {
    checkYAMLDepth(text);
  } catch (err) {
    throw decodeFailure(`error converting YAML to JSON: ${(err as Error).message}`, text, opts.kind);
  }
  const { LineCounter, parseAllDocuments } = yaml();
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: '1.1',
    uniqueKeys: false,
    merge: true,
    customTags: readTags,
    lineCounter,
  });
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  if (!doc) return { value: null, duplicates: [] };
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const line = lineCounter.linePos(err.pos[0]).line;
    const msg = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw decodeFailure(
      `error converting YAML to JSON: yaml: line ${line}: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}`,
      text,
      opts.kind,
    );
  }
  const duplicates = opts.detectDuplicates ? findDuplicates(doc.contents, lineCounter) : [];
  let value: unknown;
  try {
    value = boundedJS(doc);
  } catch (err) {
    throw decodeFailure(`error converting YAML to JSON: ${(err as Error).message}`, text, opts.kind);
  }
  return { value, duplicates };
}

function findDuplicates(root: Node | null, lc: YAMLLib.LineCounter): string[] {
  const { isScalar, visit } = yaml();
  const found: { at: number; msg: string }[] = [];
  visit(root, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const item of map.items as Pair<unknown, unknown>[]) {
        const k = item.key;
        const v = isScalar(k) ? k.value : k;
        const id = typeof v === 'string' ? v : JSON.stringify(v);
        if (!seen.has(id)) {
          seen.add(id);
          continue;
        }
        const at = isScalar(k) && k.range ? k.range[0] : 0;
        const key = typeof v === 'string' ? JSON.stringify(v) : String(v);
        found.push({ at, msg: `line ${lc.linePos(at).line}: key ${key} already set in map` });
      }
    },
  });
  // yaml.v2 reports in document order.
  return found.sort((a, b) => a.at - b.at).map((f) => f.msg);
}

/**
 * What aliases may expand a document to: scalar characters plus one per node.
 * A body is at most a few MiB; aliases that multiply it past this are an
 * attack ("billion laughs"), refused before anything is expanded in memory.
 */
export const MAX_YAML_EXPANSION = 16 << 20;
const EXCESSIVE_ALIASING = 'yaml: document contains excessive aliasing';

/** The document as plain JS with sorted keys, refusing alias bombs with yaml.v2's words. */
function boundedJS(doc: YAMLLib.Document.Parsed): unknown {
  const { isAlias, isCollection, isPair, isScalar } = yaml();
  const memo = new Map<unknown, number>();
  const open = new Set<unknown>();
  const size = (node: unknown): number => {
    if (node === null || node === undefined) return 1;
    const known = memo.get(node);
    if (known !== undefined) return known;
    let n = 1;
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (open.has(target)) throw new Error(`yaml: anchor '${node.source}' value contains itself`);
      n = size(target);
    } else if (isScalar(node)) {
      n += typeof node.value === 'string' ? node.value.length : 8;
    } else if (isPair(node)) {
      n += size(node.key) + size(node.value);
    } else if (isCollection(node)) {
      open.add(node);
      for (const item of node.items) {
        n += size(item);
        if (n > MAX_YAML_EXPANSION) break;
      }
      open.delete(node);
    }
    if (n > MAX_YAML_EXPANSION) throw new Error(EXCESSIVE_ALIASING);
    memo.set(node, n);
    return n;
  };
  size(doc.contents);
  try {
    return sortKeys(doc.toJS({ maxAliasCount: -1 }));
  } catch (err) {
    // Whatever the walk above did not foresee still ends as a decode error, never a crash.
    throw new Error(err instanceof RangeError ? EXCESSIVE_ALIASING : `yaml: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** yaml.v2's strict error text for the duplicates parseYAML found. */
export const yamlDuplicateError = (lines: string[]) => `yaml: unmarshal errors:\n  ${lines.join('\n  ')}`;

/** Go's JSON encoding of a map orders keys; YAML-sourced objects come out sorted. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return v;
}

/**
 * The value of the first document, read the way parseYAML reads (YAML 1.1 scalars,
 * timestamps as strings, no duplicate-key check); throws a plain Error naming the
 * line. For request bodies outside the object decoder (apply patches, delete options).
 */
export function readYAMLValue(text: string): unknown {
  checkYAMLDepth(text);
  const { parseDocument } = yaml();
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false, merge: true, customTags: readTags });
  if (doc.errors.length > 0) throw new Error(doc.errors[0].message.split('\n')[0]);
  return boundedJS(doc);
}

/** Every document of a configuration file (kubeconfig, audit policy, encryption config). */
export function parseConfigDocuments(text: string): unknown[] {
  return yaml()
    .parseAllDocuments(text)
    .map((d) => d.toJSON() as unknown);
}

/**
 * The first document of a configuration file; null when empty. A JSON document (JSON is YAML)
 * is read without loading the YAML parser, whose ~70 modules cost a process ~9 MB and ~50 ms.
 */
export function parseConfigYAML(text: string): any {
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // not JSON after all (a YAML flow mapping, say): the YAML parser decides
    }
  }
  return yaml().parse(text) ?? null;
}

export { toYAML } from './yaml-write';
