// Opens the LMDB environment and its databases.
//
//   kv    key -> createRevision, modRevision, lease, value      current state
//   log   revision -> event (type, key, kv, prevKv)             history, one entry per revision
//   hist  [key, revision] -> event type                         index over log
//   ttl   [deadline, key] -> -                                  expiry queue
//   meta  'rev' | 'compacted' | 'dictionary' -> number
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
import { STORE_DICTIONARY, STORE_DICTIONARY_VERSION } from './dictionary';

/** The slice of an lmdb-js database this backend uses, typed by what goes in and what comes out. */
export interface Table<K, KOut, VIn, VOut> {
  get(key: K): VOut | undefined;
  doesExist(key: K): boolean;
  /** Inside a transaction it runs at once; `result` is false when LMDB refused it. */
  put(key: K, value: VIn, opts?: { append?: boolean; noOverwrite?: boolean }): { result?: boolean };
  /** Outside a transaction: commits at once. */
  putSync(key: K, value: VIn): boolean;
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
 * kv and log values over 1000 bytes are LZ4-compressed by lmdb-js with a dictionary of objects
 * as the apiserver stores them (dictionary.ts): a stored pod of 2.7 KB takes ~0.7 KB (~1.4 KB
 * without it), five to a page instead of a 4 KiB overflow page each. lmdb-js loads the
 * dictionary before every compression (~2 µs per KB of it), so it is kept to 4 KB. Records compressed without one (stores from
 * before the dictionary) read back the same with it, since an LZ4 block without one never refers
 * to bytes before its start; the meta records the version so a future dictionary can tell.
 */
const COMPRESSION = { threshold: 1000, dictionary: STORE_DICTIONARY };
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
  const meta = sub('meta', metaCodec) as Dbs['meta'];
  const dictionary = meta.get('dictionary');
  if (dictionary === undefined) meta.putSync('dictionary', STORE_DICTIONARY_VERSION);
  else if (dictionary !== STORE_DICTIONARY_VERSION) {
    void env.close();
    throw new Error(
      `${dataDir}: written with store dictionary ${dictionary} by a newer tkube; this one knows ${STORE_DICTIONARY_VERSION}`,
    );
  }
  return {
    env,
    kv: sub('kv', kvCodec, kvKeys, { ...COMPRESSION, startingOffset: KV_PLAIN_PREFIX }) as Dbs['kv'],
    log: sub('log', logCodec, logKeys, COMPRESSION) as Dbs['log'],
    logCodec,
    hist: sub('hist', byteCodec, histKeys) as Dbs['hist'],
    ttl: sub('ttl', byteCodec, ttlKeys) as Dbs['ttl'],
    meta,
  };
}
