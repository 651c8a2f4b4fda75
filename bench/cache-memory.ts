// What one cached pod costs in the watch cache, split by part: the cached form
// as the cacher builds it at ingest, its managedFields, its selector attrs, and
// its memoised JSON and Protobuf encodings. Run with --expose-gc:
//   node --expose-gc dist/bench/cache-memory.js [pods]
// Byte counts, not timings: valid on a loaded machine.
import { startTestAPIServer, testRequester } from '../apiserver/server/testing';
import { CachedObject } from '../apiserver/storage/cacher/cached-object';
import { encodeCached, encodeList, JSON_REP, type Representation } from '../apiserver/endpoints/encoding';
import { pod, runningStatus } from './lib/objects';
import { readFileSync } from 'node:fs';

const PB: Representation = {
  format: 'protobuf',
  stream: false,
  mediaType: 'application/vnd.kubernetes.protobuf',
  pretty: false,
};

const gc = (globalThis as any).gc as (() => void) | undefined;

function mem() {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, off: m.arrayBuffers };
}

/** The process's resident memory by kind, and V8's view of it, in MB. */
function residentMB(): string {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(s)?.[1] ?? NaN) / 1024;
  const m = process.memoryUsage();
  const mb = (b: number) => (b / 1048576).toFixed(0);
  return (
    `RSS ${kb('VmRSS').toFixed(0)} MB (anon ${kb('RssAnon').toFixed(0)}, file ${kb('RssFile').toFixed(0)}); ` +
    `V8 heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)} committed, array buffers ${mb(m.arrayBuffers)}, external ${mb(m.external)}`
  );
}

const kib = (bytes: number, n: number) => `${(bytes / n / 1024).toFixed(2)} KiB`;

async function main(): Promise<void> {
  if (!gc) throw new Error('run with node --expose-gc');
  const n = Number(process.argv[2] ?? 2000);
  const srv = await startTestAPIServer();
  const api = testRequester(srv.config);
  try {
    const ns = 'mem';
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < n; i = next++) {
        const name = `pod-${i}`;
        const c = await api('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(ns, name, i) });
        if (c.status !== 201) throw new Error(`create: ${c.status} ${c.body}`);
        const created = c.json;
        created.status = runningStatus(i);
        const u = await api('PUT', `/api/v1/namespaces/${ns}/pods/${name}/status`, { body: created });
        if (u.status !== 200) throw new Error(`status: ${u.status} ${u.body}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    console.log(`after storing ${n} pods: ${residentMB()}`);
    gc?.();
    console.log(`  after a full GC: ${residentMB()}`);
    const served = srv.running.registry.lookup('', 'v1', 'pods')!;
    const store = served.store;
    const cacheCodec = store.cacheCodec();
    const res = await srv.running.storage.range(`/registry/pods/${ns}/`);
    const kvs = res.kvs.map((kv) => ({ ...kv, value: Buffer.from(kv.value) }));
    const stored = kvs.reduce((s, kv) => s + kv.value.length, 0);
    console.log(`${kvs.length} pods, stored value ${kib(stored, kvs.length)} each`);

    for (const compact of [false, true]) {
      const codec1 = { ...cacheCodec, compact };
      console.log(compact ? 'compact entries (stored bytes, decoded on demand):' : 'decoded entries:');
      const m0 = mem();
      const objs = kvs.map((kv) => CachedObject.fromKV(kv, codec1));
      const m1 = mem();
      console.log(`  at ingest: heap ${kib(m1.heap - m0.heap, n)}, off-heap ${kib(m1.off - m0.off, n)}`);
      if (!compact) {
        const mf = objs.map((o) => o.obj.metadata.managedFields);
        for (const o of objs) delete o.obj.metadata.managedFields;
        const m2 = mem();
        mf.length = 0;
        const m3 = mem();
        console.log(`    of which managedFields: ${kib(m2.heap - m3.heap, n)}`);
        objs.splice(0, objs.length, ...kvs.map((kv) => CachedObject.fromKV(kv, codec1)));
      }
      const m4 = mem();
      const c0 = process.cpuUsage();
      encodeList(JSON_REP, served, { resourceVersion: '1', continue: '' }, objs);
      const c1 = process.cpuUsage(c0);
      console.log(
        `  first JSON list (encodes every item): ${((c1.user + c1.system) / 1000).toFixed(0)} ms CPU`,
      );
      const m5 = mem();
      console.log(
        `  + memoised JSON: heap ${kib(m5.heap - m4.heap, n)}, off-heap ${kib(m5.off - m4.off, n)}`,
      );
      for (const o of objs) encodeCached(PB, served, o);
      const m6 = mem();
      console.log(
        `  + Protobuf (in place of the stored bytes when they are Protobuf, else memoised): heap ${kib(m6.heap - m5.heap, n)}, off-heap ${kib(m6.off - m5.off, n)}`,
      );
      console.log(`  total per pod: ${kib(m6.heap - m0.heap + (m6.off - m0.off), n)}`);
      const t0 = process.cpuUsage();
      for (let r = 0; r < 5; r++) encodeList(JSON_REP, served, { resourceVersion: '1', continue: '' }, objs);
      const t1 = process.cpuUsage(t0);
      console.log(`  JSON list of ${n} from memos: ${((t1.user + t1.system) / 5000).toFixed(1)} ms CPU`);
      const t2 = process.cpuUsage();
      for (let r = 0; r < 5; r++) encodeList(PB, served, { resourceVersion: '1', continue: '' }, objs);
      const t3 = process.cpuUsage(t2);
      console.log(`  Protobuf list of ${n}: ${((t3.user + t3.system) / 5000).toFixed(1)} ms CPU`);
      objs.length = 0;
    }
  } finally {
    await api.close();
    await srv.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
