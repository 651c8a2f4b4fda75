// Lists of all pods: from the watch cache, consistent, and in pages; JSON and Protobuf.
import { decodeObject } from '../../../shared/codec/protobuf';
import type { Api } from '../api';
import { NoiseMeter } from '../procs';
import type { ListRow } from '../results';
import { median } from '../stats';
import { type Ctx, PROTOBUF } from './context';
import type { Instance } from './instance';

function listItems(body: Buffer, protobuf: boolean): { items: number; cont: string } {
  const o = protobuf ? decodeObject(body) : JSON.parse(body.toString('utf8'));
  return { items: o.items?.length ?? 0, cont: o.metadata?.continue ?? '' };
}

/** One list of all pods; for pages, the sum of the page times (the client's decoding between pages excluded). */
async function timedList(
  api: Api,
  mode: ListRow['mode'],
  format: ListRow['format'],
): Promise<{ ms: number; bytes: number; items: number }> {
  const accept = format === 'protobuf' ? PROTOBUF : 'application/json';
  const check = (r: { status: number; body: Buffer }) => {
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  };
  if (mode !== 'pages500') {
    const r = await api.call(
      'GET',
      `/api/v1/pods${mode === 'rv0' ? '?resourceVersion=0' : ''}`,
      undefined,
      accept,
    );
    check(r);
    return { ms: r.ms, bytes: r.body.length, items: listItems(r.body, format === 'protobuf').items };
  }
  let ms = 0;
  let bytes = 0;
  let items = 0;
  let cont = '';
  do {
    const q = `limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await api.call('GET', `/api/v1/pods?${q}`, undefined, accept);
    check(r);
    ms += r.ms;
    bytes += r.body.length;
    const page = listItems(r.body, format === 'protobuf');
    items += page.items;
    cont = page.cont;
  } while (cont);
  return { ms, bytes, items };
}

export async function listScenario(ctx: Ctx, b: Instance): Promise<void> {
  await b.phase('list');
  const rows: ListRow[] = [];
  const variants: [ListRow['mode'], ListRow['format'], string][] = [
    ['rv0', 'json', 'RV=0 (watch cache), JSON'],
    ['rv0', 'protobuf', 'RV=0 (watch cache), Protobuf'],
    ['consistent', 'json', 'consistent (no RV), JSON'],
    ['consistent', 'protobuf', 'consistent (no RV), Protobuf'],
    ['pages500', 'json', 'limit=500 pages, JSON'],
    ['pages500', 'protobuf', 'limit=500 pages, Protobuf'],
  ];
  for (const [mode, format, name] of variants) {
    const runs = mode === 'pages500' ? 3 : 5;
    await timedList(b.api, mode, format); // warm-up: fills the cache and the memoised encodings
    const times: number[] = [];
    let bytes = 0;
    let items = 0;
    const noise = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
    for (let i = 0; i < runs; i++) {
      const r = await timedList(b.api, mode, format);
      times.push(r.ms);
      bytes = r.bytes;
      items = r.items;
    }
    const other = noise.read();
    const med = median(times);
    rows.push({
      name,
      mode,
      format,
      items,
      medianMs: med,
      minMs: Math.min(...times),
      bytes,
      bytesPerSec: bytes / (med / 1000),
      runs,
      other,
    });
    ctx.log(`list ${name}: ${med.toFixed(0)} ms, ${(bytes / 1e6).toFixed(1)} MB, ${items} items`);
  }
  ctx.result.list = rows;
}
