// The GET ceiling of `npm run bench`: a bare node:http2 TLS server (allowHTTP1,
// client certificates requested like the apiserver does) that answers every
// request with the same 1 KB JSON body. Forked by the driver with the
// apiserver's serving certificate; it reports its port over IPC. GET /size/<n>
// answers n bytes instead: the transfer ceiling of a list response of that size.
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
