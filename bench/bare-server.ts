// The GET ceiling of `npm run bench`: a bare node:http2 TLS server (allowHTTP1,
// client certificates requested like the apiserver does) that answers every
// request with the same 1 KB JSON body. Forked by the driver with the
// apiserver's serving certificate; it reports its port over IPC. GET /size/<n>
// answers n bytes instead: the transfer ceiling of a list response of that size.
// GET /watch holds a streaming response open, and POST /fanout?updates=&rate=
// then writes that many events (a watch event's shape and size, stamped when due
// like the updater's) to every open watch at that rate, one write per watcher and
// event: the fan-out ceiling of the TLS stack with no API work. It answers with its
// CPU time per write.
//   node dist/bench/bare-server.js <cert.pem> <key.pem> <client-ca.pem>
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';

const [certFile, keyFile, caFile] = process.argv.slice(2);
const body = Buffer.from(JSON.stringify({ kind: 'Bench', data: 'x'.repeat(1024 - 26) }));
const bodies = new Map<number, Buffer>();
const sized = (n: number) => {
  let b = bodies.get(n);
  if (!b) bodies.set(n, (b = Buffer.alloc(Math.min(n, 1 << 30), 'x')));
  return b;
};

type Res = http2.Http2ServerResponse;
const watches = new Set<Res>();

/** A MODIFIED event of the bench's watched ConfigMap (1 KB of data), as one JSON line. */
function event(stamp: number): Buffer {
  const head = `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"target","namespace":"bench-watch"},"data":{"ts":"${stamp}","v":"`;
  return Buffer.from(head + 'x'.repeat(Math.max(0, 1400 - head.length - 5)) + '"}}}\n');
}

async function fanout(updates: number, rate: number): Promise<{ writes: number; cpuUsPerWrite: number }> {
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  let writes = 0;
  for (let i = 0; i < updates; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Stamped when due, not when written: a server falling behind counts, as in tkube's rows.
    const frame = event(performance.timeOrigin + due);
    for (const w of watches) {
      w.write(frame);
      writes++;
    }
  }
  // Until what was written has gone to the sockets.
  while ([...watches].some((w) => w.writableLength > 0)) await new Promise((r) => setTimeout(r, 10));
  const c = process.cpuUsage(cpu0);
  return { writes, cpuUsPerWrite: (c.user + c.system) / Math.max(1, writes) };
}

const server = http2.createSecureServer(
  {
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    ca: readFileSync(caFile),
    requestCert: true,
    rejectUnauthorized: false,
    allowHTTP1: true,
    ALPNProtocols: ['h2', 'http/1.1'],
  },
  (req, res) => {
    if (req.url === '/watch') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
      // HTTP/1.1 answers arrive here as http.ServerResponse: send the headers now.
      (res as unknown as { flushHeaders?: () => void }).flushHeaders?.();
      watches.add(res);
      res.on('close', () => watches.delete(res));
      return;
    }
    const f = /^\/fanout\?updates=(\d+)&rate=(\d+)$/.exec(req.url ?? '');
    if (f && req.method === 'POST') {
      void fanout(Number(f[1]), Number(f[2])).then((r) => res.end(JSON.stringify(r)));
      return;
    }
    // /size/<n>: a body of n bytes (the transfer ceiling of a list of that size).
    const m = /^\/size\/(\d+)$/.exec(req.url ?? '');
    const b = m ? sized(Number(m[1])) : body;
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(b.length),
      'cache-control': 'no-cache, private',
    });
    res.end(b);
  },
);
server.on('sessionError', () => {});
server.on('tlsClientError', () => {});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({ port: typeof a === 'object' && a ? a.port : 0 });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
