// Encodes what handlers return in the negotiated representation. Objects the
// watch cache holds are encoded once per representation (CachedObject memo);
// lists in JSON are spliced from those cached item encodings.
import type { CachedObject } from '../storage/cacher/cached-object';
import type { WatchItem } from '../storage/cacher/watchers';
import type { ServedResource } from '../registry/registry';
import { goStatus, type Status } from '../../shared/api/status';
import {
  encodeListFromRawItems,
  encodeMessage,
  encodeObject as encodeProtobuf,
  wrapEnvelope,
} from '../../shared/codec/protobuf';
import { toYAML } from '../../shared/codec/yaml';
import { encodeWatchFrame } from '../../shared/codec/watch-frame';
import { toTable, tableWatchEncoder, type IncludeObject } from '../../shared/codec/table';
import {
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  partialWatchEncoder,
} from '../../shared/codec/partial';
import { printerFor } from '../../shared/api/printers';
import { goJSONText, goShapeObject, sortedDeep } from '../../shared/codec/go-json';

export interface Representation {
  format: 'json' | 'yaml' | 'protobuf';
  as?: { kind: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList'; version: 'v1' | 'v1beta1' };
  stream: boolean;
  /** Content-Type of the response. */
  mediaType: string;
  pretty: boolean;
  /** Table rows: includeObject=None|Metadata|Object. */
  includeObject?: IncludeObject;
}

export const JSON_REP: Representation = {
  format: 'json',
  stream: false,
  mediaType: 'application/json',
  pretty: false,
};

/** The object of a cached entry in the served version. */
export function servedObject(served: ServedResource, o: CachedObject): any {
  return served.fromStorage(o.obj);
}

function jsonOf(rep: Representation, obj: unknown): Buffer {
  const shaped = goShapeObject(obj);
  return Buffer.from(goJSONText(shaped, rep.pretty ? 2 : undefined));
}

/** Encodes a plain object (already in the served version) or a Status. */
export function encodeObject(rep: Representation, obj: unknown): Buffer {
  switch (rep.format) {
    case 'yaml':
      // sigs.k8s.io/yaml's JSONToYAML reads the JSON into maps: YAML keys come out sorted.
      return Buffer.from(toYAML(sortedDeep(goShapeObject(obj))));
    case 'protobuf':
      return encodeProtobuf(obj);
    default:
      return jsonOf(rep, obj);
  }
}

/** The printer of a served resource (custom resources bring their own columns). */
export const printerOf = (served: ServedResource) =>
  served.printer ?? printerFor(served.info.group, served.info.kind);

/** Applies an as=Table / as=PartialObjectMetadata[List] transformation to an object or list. */
function transform(rep: Representation, served: ServedResource, objOrList: any): unknown {
  const as = rep.as!;
  const custom = !served.info.definition;
  switch (as.kind) {
    case 'Table':
      return toTable(objOrList, printerOf(served), { version: as.version, includeObject: rep.includeObject });
    case 'PartialObjectMetadata':
      return asPartialObjectMetadata(objOrList, as.version, { custom });
    default:
      return asPartialObjectMetadataList(objOrList, as.version, { custom });
  }
}

/** Encodes one cached object, reusing its memoised encoding when possible. */
export function encodeCached(rep: Representation, served: ServedResource, o: CachedObject): Buffer {
  if (rep.as) return encodeObject(rep, transform(rep, served, servedObject(served, o)));
  if (served.isStorageVersion) {
    if (rep.format === 'json' && !rep.pretty) return o.encoded('json', jsonBytes);
    if (rep.format === 'protobuf')
      return wrapEnvelope(served.info.groupVersion, served.info.kind, rawMessage(served, o));
  }
  return encodeObject(rep, servedObject(served, o));
}

/**
 * The bare Protobuf message of a cached object in the served version: for the storage
 * version cut from the stored bytes where that is exact, else memoised.
 */
function rawMessage(served: ServedResource, o: CachedObject): Buffer {
  const { groupVersion, kind } = served.info;
  if (served.isStorageVersion) return o.message('pb', (obj) => encodeMessage(groupVersion, kind, obj));
  return encodeMessage(groupVersion, kind, servedObject(served, o));
}

export interface ListMeta {
  resourceVersion: string;
  continue: string;
  remainingItemCount?: number;
}

export function encodeList(
  rep: Representation,
  served: ServedResource,
  meta: ListMeta,
  items: CachedObject[],
): Buffer | Buffer[] {
  const head = { kind: served.info.listKind, apiVersion: served.info.groupVersion, metadata: listMeta(meta) };
  if (rep.as)
    return encodeObject(
      rep,
      transform(rep, served, { ...head, items: items.map((o) => servedObject(served, o)) }),
    );
  if (rep.format === 'json' && !rep.pretty) {
    const parts: Buffer[] = [Buffer.from(goJSONText(head).slice(0, -1) + ',"items":[')];
    for (let i = 0; i < items.length; i++) {
      if (i) parts.push(COMMA);
      parts.push(encodeCached(rep, served, items[i]));
    }
    parts.push(CLOSE_LIST);
    return parts;
  }
  if (rep.format === 'protobuf') {
    return encodeListFromRawItems(
      served.info.groupVersion,
      served.info.listKind,
      meta,
      items.map((o) => rawMessage(served, o)),
    );
  }
  return encodeObject(rep, { ...head, items: items.map((o) => servedObject(served, o)) });
}

/**
 * ListMeta in Go's field order. `continue` stays even when empty: SPEC.md asks for it in
 * every list (Kubernetes leaves it out; docs/comparison.md).
 */
function listMeta(meta: ListMeta): Partial<ListMeta> {
  const out: Partial<ListMeta> = {};
  if (meta.resourceVersion) out.resourceVersion = meta.resourceVersion;
  out.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) out.remainingItemCount = meta.remainingItemCount;
  return out;
}

const COMMA = Buffer.from(',');
const CLOSE_LIST = Buffer.from(']}');

/**
 * The frame encoder of one watch. Plain representations share frames across
 * watchers (memoised on the item); Table and metadata-only watches transform
 * per watcher (a Table's first event carries the column definitions).
 */
export function watchEncoder(rep: Representation, served: ServedResource): (item: WatchItem) => Buffer {
  if (!rep.as) {
    const key = watchFrameKey(rep, served)!;
    return (item) => encodeWatchItem(rep, served, item, key);
  }
  const t =
    rep.as.kind === 'Table'
      ? tableWatchEncoder(printerOf(served), { version: rep.as.version, includeObject: rep.includeObject })
      : partialWatchEncoder(rep.as.kind, rep.as.version);
  return (item) => {
    let object: unknown;
    if (item.type === 'BOOKMARK' || item.type === 'ERROR') object = plainWatchObject(served, item);
    else object = t(servedObject(served, item.object!));
    if (rep.format === 'protobuf') return encodeWatchFrame(item.type, encodeProtobuf(object));
    return Buffer.from(goJSONText({ type: item.type, object }) + '\n');
  };
}

function plainWatchObject(served: ServedResource, item: WatchItem): unknown {
  if (item.type === 'BOOKMARK') {
    const metadata: Record<string, unknown> = { resourceVersion: String(item.rv) };
    if (item.initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    return { kind: served.info.kind, apiVersion: served.info.groupVersion, metadata };
  }
  return goStatus(
    (item.error as any)?.status ?? {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: String(item.error),
      code: 500,
    },
  );
}

/**
 * The key under which a watch item's frame in this representation is memoised on the item,
 * shared by every watcher; null when each watch encodes its own (Table, metadata-only).
 */
export function watchFrameKey(rep: Representation, served: ServedResource): string | null {
  return rep.as ? null : `${rep.format}|${served.info.groupVersion}`;
}

/** One watch event frame; shared frames are memoised on the item for every watcher. */
export function encodeWatchItem(
  rep: Representation,
  served: ServedResource,
  item: WatchItem,
  key = watchFrameKey(rep, served)!,
): Buffer {
  const frames = (item.frames ??= new Map());
  let f = frames.get(key);
  if (f) return f;
  const object =
    item.type === 'BOOKMARK' || item.type === 'ERROR' ? plainWatchObject(served, item) : undefined;
  if (rep.format === 'protobuf') {
    const envelope =
      object === undefined
        ? wrapEnvelope(served.info.groupVersion, served.info.kind, rawMessage(served, item.object!))
        : encodeProtobuf(object);
    f = encodeWatchFrame(item.type, envelope);
  } else if (object === undefined && rep.format === 'json' && !rep.pretty) {
    f = Buffer.concat([
      Buffer.from(`{"type":"${item.type}","object":`),
      encodeCached(rep, served, item.object!),
      NEWLINE_CLOSE,
    ]);
  } else {
    // Bookmarks too: Go writes the kind's whole (empty) struct around the resourceVersion.
    const body = goShapeObject(object ?? servedObject(served, item.object!));
    f = Buffer.from(goJSONText({ type: item.type, object: body }) + '\n');
  }
  frames.set(key, f);
  return f;
}

const NEWLINE_CLOSE = Buffer.from('}\n');

export function encodeStatus(rep: Representation, status: Status): Buffer {
  return encodeObject(rep, goStatus(status));
}

/** The JSON of a cached object, as Go writes its type; memoised per object by the caller. */
function jsonBytes(obj: unknown): Buffer {
  return Buffer.from(goJSONText(goShapeObject(obj)));
}
