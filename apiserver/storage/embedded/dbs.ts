// Opens the LMDB environment and its databases.
//
//   kv    key -> createRevision, modRevision, lease, value      current state
//   log   revision -> event (type, key, kv, prevKv)             history, one entry per revision
//   hist  [key, revision] -> event type                         index over log
//   ttl   [deadline, key] -> -                                  expiry queue
//   meta  'rev' | 'compacted' -> number
//
// Every write updates all of them in ONE transaction.
//
// Why hist: a read at revision R needs, for each key, the first change after R
// (its prevKv is the value at R). Without an index that is a scan of the log
// from R to now, across every key in the store: unbounded by the prefix and
// growing with the write rate. hist answers "first change of key k after R" with
// one seek, and "keys under a prefix changed after R" by walking only that
// prefix's retained history. Entries are 10 bytes plus the key, and are removed
// together with their log entry by compaction.
//
// Why ttl: expiry must survive restarts, and the next deadline must be found
// without scanning every key. Its first entry is the next key to expire.
import * as fs from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import {
  byteCodec,
  histKeys,
  kvCodec,
  kvKeys,
  LogCodec,
  logKeys,
  metaCodec,
  ttlKeys,
  type HistKey,
  type Kv,
  type TtlKey,
} from './codec';

/** The slice of an lmdb-js database this backend uses, typed by what goes in and what comes out. */
export interface Table<K, KOut, VIn, VOut> {
  get(key: K): VOut | undefined;
  doesExist(key: K): boolean;
  /** Inside a transaction it runs at once; `result` is false when LMDB refused it. */
  put(key: K, value: VIn, opts?: { append?: boolean; noOverwrite?: boolean }): { result?: boolean };
  remove(key: K): unknown;
  getRange(opts: RangeOpts<K>): Iterable<{ key: KOut; value: VOut }>;
  getKeys(opts: RangeOpts<K>): Iterable<KOut>;
  getCount(opts: RangeOpts<K>): number;
}

export interface RangeOpts<K> {
  start?: K;
  end?: K;
  limit?: number;
  exclusiveStart?: boolean;
}

export interface Dbs {
  readonly env: RootDatabase;
  readonly kv: Table<string | Buffer, string, Buffer, Kv>;
  /** Values decode per `logCodec.mode`. */
  readonly log: Table<number, number, Buffer, unknown>;
  /** The codec instance `log` decodes with (its mode and filters are set per read). */
  readonly logCodec: LogCodec;
  readonly hist: Table<HistKey | Buffer, HistKey, Buffer, number>;
  readonly ttl: Table<TtlKey | Buffer, TtlKey, Buffer, number>;
  readonly meta: Table<string, string, number, number>;
}

/** Address space reserved for the store's map (not disk, not memory): 64 GiB. */
const MAP_SIZE = 2 ** 36;

/**
 * kv and log values over 1000 bytes are LZ4-compressed by lmdb-js: a stored pod of 2.7 KB
 * takes ~1.4 KB, two to a page instead of a 4 KiB overflow page each, which halves the data
 * file and the map's resident pages (115 → 55 MB after storing 10k pods). No dictionary:
 * one would be part of the file format, and lmdb-js's default may change between versions.
 */
const COMPRESSION = { threshold: 1000, dictionary: Buffer.alloc(0) };
/**
 * lmdb-js reads a value as compressed when its byte at `startingOffset` is >= 250 (and
 * compresses every value with such a byte there). A log record starts with its event
 * code (1-3); a kv record with createRevision as a little-endian double, whose byte 7 (sign
 * and exponent) is 0x00 or 0x3f-0x43 for a revision below 2^53. So records written before
 * compression was on read back unchanged.
 */
const KV_PLAIN_PREFIX = 7;

export function openDbs(dataDir: string): Dbs {
  fs.mkdirSync(dataDir, { recursive: true });
  const env = open({
    path: dataDir,
    // The data directory is a directory even when its name has a dot in it.
    noSubdir: false,
    maxDbs: 8,
    // Durable commits with the fsync done after the commit on lmdb's writer
    // thread, overlapping the next transaction (lmdb-js default on Linux; explicit
    // because the commit path relies on `flushed`).
    overlappingSync: process.platform !== 'win32',
    // One address-space reservation for the store's life: lmdb-js otherwise starts at 128 KB and
    // remaps as the file grows, and the older maps stay with their pages resident (RSS) while
    // read snapshots hold them. Without a write map the file itself does not grow to this size.
    mapSize: MAP_SIZE,
  });
  const logCodec = new LogCodec();
  // lmdb-js takes `keyEncoder`/`encoder` on named databases too; its typings only list them for the root.
  const sub = (name: string, encoder: unknown, keyEncoder?: unknown, compression?: object): unknown =>
    env.openDB(
      Object.assign(
        { name },
        keyEncoder ? { keyEncoder } : {},
        { encoder },
        compression ? { compression } : {},
      ),
    );
  return {
    env,
    kv: sub('kv', kvCodec, kvKeys, { ...COMPRESSION, startingOffset: KV_PLAIN_PREFIX }) as Dbs['kv'],
    log: sub('log', logCodec, logKeys, COMPRESSION) as Dbs['log'],
    logCodec,
    hist: sub('hist', byteCodec, histKeys) as Dbs['hist'],
    ttl: sub('ttl', byteCodec, ttlKeys) as Dbs['ttl'],
    meta: sub('meta', metaCodec) as Dbs['meta'],
  };
}
