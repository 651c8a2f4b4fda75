// Content negotiation with Kubernetes' rules: which serializer and which
// transformation (Table, PartialObjectMetadata[List]) answers an Accept
// header, and how a request body's Content-Type is read. The rules are the
// ones of k8s.io/apiserver's negotiation package and goautoneg's parser, so a
// client sees the same choice, fallback and 406/415 messages.
import { notAcceptable, unsupportedMediaType } from '../../shared/api/status';

export type OutputFormat = 'json' | 'yaml' | 'protobuf';
export type MetaVersion = 'v1' | 'v1beta1';
export type TransformKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export const MEDIA_JSON = 'application/json';
export const MEDIA_YAML = 'application/yaml';
export const MEDIA_PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface Serializer {
  format: OutputFormat;
  type: string;
  subtype: string;
  mediaType: string;
  /** Has a watch framing (YAML has none). */
  stream: boolean;
}

// The server's serializers in Kubernetes' order: */* and application/* pick JSON.
const SERIALIZERS: readonly Serializer[] = [
  { format: 'json', type: 'application', subtype: 'json', mediaType: MEDIA_JSON, stream: true },
  { format: 'yaml', type: 'application', subtype: 'yaml', mediaType: MEDIA_YAML, stream: false },
  {
    format: 'protobuf',
    type: 'application',
    subtype: 'vnd.kubernetes.protobuf',
    mediaType: MEDIA_PROTOBUF,
    stream: true,
  },
];

const SUPPORTED = SERIALIZERS.map((s) => s.mediaType);
const SUPPORTED_STREAM = SERIALIZERS.filter((s) => s.stream).map((s) => `${s.mediaType};stream=watch`);

// ---------------------------------------------------------------------------
// Accept parsing (goautoneg)

export interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
  params: Record<string, string>;
}

/** Go's strconv.ParseFloat(s, 32) with goautoneg's habit of turning errors into 0. */
function parseQ(s: string): number {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Math.fround(Number(s));
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  return 0;
}

// goautoneg's ordering: it is not a strict order, so the sort must be the same
// insertion sort Go applies to short slices to give the same result.
const before = (a: AcceptClause, b: AcceptClause): boolean =>
  a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subtype !== '*' && b.subtype === '*');

/**
 * Parses an Accept header like goautoneg: clauses trimmed of spaces, bad media
 * ranges dropped, `*` read as `* / *`, q defaulting to 1, then sorted by q and
 * specificity. Types and parameter names are case-sensitive, as in Kubernetes.
 */
export function parseAccept(header: string): AcceptClause[] {
  const out: AcceptClause[] = [];
  for (const raw of header.split(',')) {
    const part = trimSpaces(raw);
    const segs = part.split(';');
    const range = segs[0].split('/');
    const type = trimSpaces(range[0]);
    let subtype: string;
    if (range.length === 1 && type === '*') subtype = '*';
    else if (range.length === 2) subtype = trimSpaces(range[1]);
    else continue;
    const clause: AcceptClause = { type, subtype, q: 1, params: {} };
    for (let i = 1; i < segs.length; i++) {
      const eq = segs[i].indexOf('=');
      if (eq < 0) continue;
      const key = trimSpaces(segs[i].slice(0, eq));
      const value = segs[i].slice(eq + 1);
      if (key === 'q') clause.q = parseQ(value);
      else clause.params[key] = trimSpaces(value);
    }
    out.push(clause);
  }
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && before(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]];
  }
  return out;
}

const trimSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

/** 2 for an exact match of the clause, 1 for type/*, 0 for * / *, -1 for none. */
function specificity(c: AcceptClause, s: Serializer): number {
  if (c.type === s.type && c.subtype === s.subtype) return 2;
  if (c.type === s.type && c.subtype === '*') return 1;
  if (c.type === '*' && c.subtype === '*') return 0;
  return -1;
}

// ---------------------------------------------------------------------------
// Output negotiation

export interface OutputEndpoint {
  /**
   * What the answer carries: one object (get, and the answers of create, update,
   * patch and delete), a list, or a watch stream. get and list negotiate alike, as
   * in Kubernetes: asking a list for PartialObjectMetadata fails later, in the
   * transformation (so a 404 still wins). A watch also needs a stream framing.
   */
  verb: 'get' | 'list' | 'watch';
  /** The kind has a Protobuf encoding. Custom resources do not. Default true. */
  protobuf?: boolean;
  /** The endpoint can render Tables. Default true. */
  table?: boolean;
}

export interface OutputDecision {
  format: OutputFormat;
  /** The transformation asked for, when there is one. */
  as?: { kind: TransformKind; version: MetaVersion };
  /** A watch stream. */
  stream: boolean;
  /** The Content-Type of the answer. */
  mediaType: string;
  /** `pretty=1` in the accepted clause (see also isPrettyPrint). */
  pretty: boolean;
}

interface Matched {
  serializer: Serializer;
  as?: { kind: TransformKind; version: MetaVersion };
  pretty: boolean;
}

/** acceptMediaTypeOptions: the clause's parameters against what the endpoint serves. */
function acceptParams(
  params: Record<string, string>,
  s: Serializer,
  ep: OutputEndpoint,
): Matched | undefined {
  let convert: { kind: string; group: string; version: string } | undefined;
  let pretty = false;
  for (const [k, v] of Object.entries(params)) {
    switch (k) {
      case 'as':
        (convert ??= { kind: '', group: '', version: '' }).kind = v;
        break;
      case 'g':
        (convert ??= { kind: '', group: '', version: '' }).group = v;
        break;
      case 'v':
        (convert ??= { kind: '', group: '', version: '' }).version = v;
        break;
      case 'stream':
        if (v !== '' && (!s.stream || v !== 'watch')) return undefined;
        break;
      case 'sv':
        if (v !== '' && v !== 'v1') return undefined;
        break;
      case 'pretty':
        pretty = v === '1';
        break;
      default:
        break; // charset and unknown parameters are ignored
    }
  }
  if (!convert) {
    // No transformation: custom resources have no Protobuf form.
    if (s.format === 'protobuf' && ep.protobuf === false) return undefined;
    return { serializer: s, pretty };
  }
  if (convert.group !== 'meta.k8s.io' || (convert.version !== 'v1' && convert.version !== 'v1beta1')) {
    return undefined;
  }
  const version = convert.version;
  switch (convert.kind) {
    case 'Table':
      if (ep.table === false || s.format === 'protobuf') return undefined;
      return { serializer: s, as: { kind: 'Table', version }, pretty };
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      // Metadata types have a Protobuf form even for custom resources.
      return { serializer: s, as: { kind: convert.kind, version }, pretty };
    default:
      return undefined;
  }
}

function match(accept: string | null | undefined, ep: OutputEndpoint): Matched | undefined {
  if (!accept) return { serializer: SERIALIZERS[0], pretty: false };
  const clauses = parseAccept(accept);
  // A serializer is refused when its most specific clause has q=0 (application/json;q=0 beats */*).
  const rejected = SERIALIZERS.map((s) => {
    let best = -1;
    let no = false;
    for (const c of clauses) {
      const spec = specificity(c, s);
      if (spec > best) {
        best = spec;
        no = c.q <= 0;
      }
    }
    return no;
  });
  for (const c of clauses) {
    if (c.q <= 0) continue;
    for (let j = 0; j < SERIALIZERS.length; j++) {
      if (rejected[j] || specificity(c, SERIALIZERS[j]) < 0) continue;
      const m = acceptParams(c.params, SERIALIZERS[j], ep);
      if (m) return m;
    }
  }
  return undefined;
}

/**
 * Picks the answer's serializer and transformation from an Accept header, like
 * kube-apiserver: the first clause (by q, then specificity) the endpoint can
 * serve wins; an empty header means JSON; a Table asked for in a group/version
 * other than meta.k8s.io v1/v1beta1, or in Protobuf, is skipped for the next
 * clause. Throws 406 listing the server's media types when nothing fits (for a
 * watch whose match cannot stream, the streaming types).
 */
export function negotiateOutput(accept: string | null | undefined, ep: OutputEndpoint): OutputDecision {
  const m = match(accept, ep);
  if (!m) throw notAcceptable(SUPPORTED);
  const s = m.serializer;
  if (ep.verb === 'watch') {
    if (!s.stream) throw notAcceptable(SUPPORTED_STREAM);
    // A JSON watch answers plain application/json, other formats add stream=watch.
    const mediaType = s.format === 'json' ? s.mediaType : `${s.mediaType};stream=watch`;
    return { format: s.format, ...(m.as ? { as: m.as } : {}), stream: true, mediaType, pretty: m.pretty };
  }
  return {
    format: s.format,
    ...(m.as ? { as: m.as } : {}),
    stream: false,
    mediaType: s.mediaType,
    pretty: m.pretty,
  };
}

/** Go's strconv.ParseBool. */
function parseBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/**
 * Whether JSON goes out indented: the `pretty` query parameter when given,
 * otherwise for curl, Wget and browsers (Kubernetes guesses humans by User-Agent).
 */
export function isPrettyPrint(
  prettyParam: string | null | undefined,
  userAgent: string | null | undefined,
): boolean {
  if (prettyParam) return parseBool(prettyParam) ?? false;
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

// ---------------------------------------------------------------------------
// Request bodies

export type BodyFormat = 'json' | 'yaml' | 'protobuf';
export type PatchType = 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-patch';

export const PATCH_MEDIA_TYPES: Readonly<Record<PatchType, string>> = {
  'json-patch': 'application/json-patch+json',
  'merge-patch': 'application/merge-patch+json',
  'strategic-merge-patch': 'application/strategic-merge-patch+json',
  'apply-patch': 'application/apply-patch+yaml',
};

export type BodyContentType =
  | { kind: 'object'; format: BodyFormat; mediaType: string }
  | { kind: 'patch'; patchType: PatchType; format: 'json' | 'yaml'; mediaType: string }
  | { kind: 'unknown'; mediaType: string };

/** A media type with its parameters (mime.ParseMediaType): type lower-cased, or undefined when malformed. */
export function parseMediaType(
  value: string,
): { mediaType: string; params: Record<string, string> } | undefined {
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const segs = value.split(';');
  const mediaType = segs[0].trim().toLowerCase();
  const slash = mediaType.indexOf('/');
  if (slash < 0 || !TOKEN.test(mediaType.slice(0, slash)) || !TOKEN.test(mediaType.slice(slash + 1)))
    return undefined;
  const params: Record<string, string> = {};
  for (let i = 1; i < segs.length; i++) {
    const p = segs[i].trim();
    if (p === '' && i === segs.length - 1) break; // a trailing semicolon is allowed
    const eq = p.indexOf('=');
    if (eq <= 0) return undefined;
    const key = p.slice(0, eq).trim().toLowerCase();
    let v = p.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    else if (!TOKEN.test(v)) return undefined;
    if (!TOKEN.test(key)) return undefined;
    params[key] = v;
  }
  return { mediaType, params };
}

/** Classifies a body Content-Type: an object encoding, a patch type, or unknown. */
export function parseBodyContentType(contentType: string | null | undefined): BodyContentType {
  const mt = parseMediaType(contentType || MEDIA_JSON)?.mediaType ?? '';
  switch (mt) {
    case MEDIA_JSON:
      return { kind: 'object', format: 'json', mediaType: mt };
    case MEDIA_YAML:
      return { kind: 'object', format: 'yaml', mediaType: mt };
    case MEDIA_PROTOBUF:
      return { kind: 'object', format: 'protobuf', mediaType: mt };
  }
  for (const [patchType, media] of Object.entries(PATCH_MEDIA_TYPES) as [PatchType, string][]) {
    if (mt === media) {
      return {
        kind: 'patch',
        patchType,
        format: patchType === 'apply-patch' ? 'yaml' : 'json',
        mediaType: mt,
      };
    }
  }
  return { kind: 'unknown', mediaType: mt };
}

export interface BodyEndpoint {
  verb: 'create' | 'update' | 'patch';
  /** The kind has a Protobuf encoding. Custom resources do not. Default true. */
  protobuf?: boolean;
  /** The endpoint takes strategic merge patches. Custom resources do not. Default true. */
  strategicMergePatch?: boolean;
}

/**
 * Reads the Content-Type of a create, update or patch body as kube-apiserver
 * does, or throws 415 listing what the endpoint takes. Create and update parse
 * the media type (case-insensitive, parameters allowed, empty means JSON);
 * patch compares the part before the first ';' exactly, as Kubernetes does.
 */
export function negotiateBody(
  contentType: string | null | undefined,
  ep: BodyEndpoint,
): Exclude<BodyContentType, { kind: 'unknown' }> {
  if (ep.verb === 'patch') {
    const raw = contentType ?? '';
    const semi = raw.indexOf(';');
    const mt = semi > 0 ? raw.slice(0, semi) : raw;
    const allowed = (Object.keys(PATCH_MEDIA_TYPES) as PatchType[]).filter(
      (t) => t !== 'strategic-merge-patch' || ep.strategicMergePatch !== false,
    );
    for (const t of allowed) {
      if (PATCH_MEDIA_TYPES[t] === mt) {
        return { kind: 'patch', patchType: t, format: t === 'apply-patch' ? 'yaml' : 'json', mediaType: mt };
      }
    }
    throw unsupportedMediaType(
      '',
      allowed.map((t) => PATCH_MEDIA_TYPES[t]),
    );
  }
  const accepted = ep.protobuf === false ? [MEDIA_JSON, MEDIA_YAML] : SUPPORTED;
  const parsed = parseBodyContentType(contentType);
  if (parsed.kind === 'object' && accepted.includes(parsed.mediaType)) return parsed;
  throw unsupportedMediaType('', accepted);
}
