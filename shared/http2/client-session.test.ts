// tkube's HTTP/2 client against node:http2's server (nghttp2: Huffman-coded and
// indexed header fields, its own flow control), and HPACK's decoder on the RFC's examples.
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { encodeHeaders, HpackDecoder, type HeaderFields } from './hpack';
import { huffmanDecode } from './huffman';
import { H2Session, StreamAborted } from './client-session';

interface Answer {
  blocks: { fields: HeaderFields; end: boolean }[];
  body: Buffer;
}

function call(s: H2Session, path: string, body: Buffer, extra: [string, string][] = []): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const a: Answer = { blocks: [], body: Buffer.alloc(0) };
    const parts: Buffer[] = [];
    const done = () => resolve({ ...a, body: Buffer.concat(parts) });
    s.request(
      encodeHeaders([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', path],
        [':authority', 'localhost'],
        ...extra,
      ]),
      body,
      {
        headers: (fields, end) => {
          a.blocks.push({ fields, end });
          if (end) done();
        },
        data: (d, end) => {
          parts.push(Buffer.from(d));
          if (end) done();
        },
        aborted: reject,
      },
    );
  });
}

describe('etcd3: HTTP/2 client session', function () {
  this.timeout(30_000);
  let server: http2.Http2Server;
  let url: string;
  const sessions: http2.ServerHttp2Session[] = [];
  let onStream: (st: http2.ServerHttp2Stream, h: http2.IncomingHttpHeaders) => void;

  beforeEach(async () => {
    server = http2.createServer({ settings: { initialWindowSize: 1000 } });
    server.on('session', (s) => sessions.push(s));
    server.on('stream', (st, h) => onStream(st, h));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('decodes headers and trailers over many answers, as the server indexes and evicts them', async () => {
    onStream = (st, h) => {
      const n = Number(h['x-n']);
      st.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'x-echo': `value ${n} ${'é'.repeat(n % 5)}` },
        {
          waitForTrailers: true,
        },
      );
      st.on('wantTrailers', () =>
        st.sendTrailers({
          'grpc-status': String(n % 3),
          'grpc-message': `m%20${n}`,
          'x-long': 'z'.repeat(n * 97),
        }),
      );
      st.end(Buffer.from(`body ${n}`));
      st.resume();
    };
    const s = new H2Session({ url });
    try {
      for (let n = 0; n < 60; n++) {
        const a = await call(s, '/x', Buffer.from('q'), [['x-n', String(n)]]);
        assert.equal(a.blocks.length, 2);
        const [head, trailers] = a.blocks;
        assert.equal(head.fields[':status'], '200');
        assert.equal(head.fields['content-type'], 'application/grpc');
        // Header values are octets: node:http2 sends a string's Latin-1 bytes, read back as Latin-1.
        assert.equal(head.fields['x-echo'], `value ${n} ${'é'.repeat(n % 5)}`);
        assert.equal(head.end, false);
        assert.deepEqual(
          [
            trailers.fields['grpc-status'],
            trailers.fields['grpc-message'],
            trailers.fields['x-long'],
            trailers.end,
          ],
          [String(n % 3), `m%20${n}`, 'z'.repeat(n * 97), true],
        );
        assert.equal(a.body.toString(), `body ${n}`);
      }
    } finally {
      s.destroy(new Error('test over'));
    }
  });

  it('sends a body far beyond the server window and takes one far beyond its own', async () => {
    onStream = (st) => {
      const parts: Buffer[] = [];
      st.on('data', (d: Buffer) => parts.push(d));
      st.on('end', () => {
        const got = Buffer.concat(parts);
        st.respond({ ':status': 200 });
        // Twice what came, so the answer passes the 16 MiB stream window's half more than once.
        st.end(Buffer.concat([got, got, got, got]));
      });
    };
    const s = new H2Session({ url });
    try {
      const body = Buffer.alloc(5 << 20);
      for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
      const [a, b] = await Promise.all([call(s, '/a', body), call(s, '/b', body.subarray(0, 3000))]);
      assert.equal(a.body.length, 4 * body.length);
      assert.ok(a.body.subarray(3 * body.length).equals(body));
      assert.ok(b.body.equals(Buffer.concat(Array(4).fill(body.subarray(0, 3000)))));
    } finally {
      s.destroy(new Error('test over'));
    }
  });

  it('fails streams beyond GOAWAY as never processed, and a refused stream too; other resets not', async () => {
    const streams: http2.ServerHttp2Stream[] = [];
    onStream = (st) => {
      streams.push(st);
      st.on('error', () => {}); // the resets below
      st.resume();
    };
    const s = new H2Session({ url });
    let closed = 0;
    s.onClose = () => closed++;
    try {
      const calls = [1, 2, 3, 4].map((i) => call(s, `/${i}`, Buffer.from('x')).catch((e: unknown) => e));
      while (streams.length < 4) await new Promise((r) => setTimeout(r, 5));
      streams[0].close(http2.constants.NGHTTP2_REFUSED_STREAM);
      streams[1].close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      sessions[0].goaway(http2.constants.NGHTTP2_NO_ERROR, streams[2].id!);
      const refused = await calls[0];
      const reset = await calls[1];
      const beyond = await calls[3];
      assert.ok(refused instanceof StreamAborted && refused.unprocessed, String(refused));
      assert.match(refused.message, /^No connection established/);
      assert.ok(reset instanceof StreamAborted && !reset.unprocessed, String(reset));
      assert.match(reset.message, /HTTP\/2 error 2/);
      assert.ok(beyond instanceof StreamAborted && beyond.unprocessed, String(beyond));
      assert.equal(s.accepting, false);
      assert.equal(closed, 1);
      // The stream below the GOAWAY's last id still completes.
      streams[2].respond({ ':status': 200 });
      streams[2].end('late');
      const kept = await calls[2];
      assert.ok(!(kept instanceof Error), String(kept));
      assert.equal((kept as Answer).body.toString(), 'late');
    } finally {
      s.destroy(new Error('test over'));
    }
  });

  it('hands out its last stream id, then takes no more and closes once that stream is done', async () => {
    onStream = (st) => {
      st.respond({ ':status': 200 });
      st.end('last');
    };
    const s = new H2Session({ url });
    let closed = 0;
    s.onClose = () => closed++;
    try {
      assert.equal((await call(s, '/first', Buffer.from('x'))).body.toString(), 'last');
      (s as unknown as { nextId: number }).nextId = 2 ** 31 - 1; // the highest odd id
      const last = call(s, '/last', Buffer.from('x'));
      assert.equal(s.accepting, false);
      assert.equal(closed, 1);
      assert.throws(
        () => s.request(Buffer.alloc(0), Buffer.alloc(0), { headers() {}, data() {}, aborted() {} }),
        StreamAborted,
      );
      assert.equal((await last).body.toString(), 'last');
      assert.equal(s.destroyed, true, 'drained and closed');
    } finally {
      s.destroy(new Error('test over'));
    }
  });

  it('decodes the RFC 7541 examples: Huffman strings, and a dynamic table carried across blocks', () => {
    const hex = (h: string) => Buffer.from(h.replace(/\s/g, ''), 'hex');
    assert.equal(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff'), 0, 12), 'www.example.com');
    assert.equal(huffmanDecode(hex('a8eb 1064 9cbf'), 0, 6), 'no-cache');
    // Padding that is not the start of EOS.
    assert.throws(() => huffmanDecode(hex('a8eb 1064 9cbe'), 0, 6), /padding/);
    // C.4: requests with Huffman coding, the second and third reusing the table.
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')), {
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
    });
    assert.deepEqual(d.decode(hex('8286 84be 5886 a8eb 1064 9cbf')), {
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
      'cache-control': 'no-cache',
    });
    assert.deepEqual(d.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')), {
      ':method': 'GET',
      ':scheme': 'https',
      ':path': '/index.html',
      ':authority': 'www.example.com',
      'custom-key': 'custom-value',
    });
    assert.throws(() => d.decode(hex('ff00')), /no table entry/);
  });

  it('encodes fields the server reads back', async () => {
    let seen: http2.IncomingHttpHeaders = {};
    onStream = (st, h) => {
      seen = h;
      st.respond({ ':status': 200 });
      st.end();
    };
    const s = new H2Session({ url });
    try {
      await call(s, '/etcdserverpb.KV/Range', Buffer.alloc(0), [
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
        ['grpc-timeout', '1234m'],
        ['x-long', 'y'.repeat(300)],
      ]);
      assert.deepEqual(
        [seen[':method'], seen[':path'], seen['content-type'], seen.te, seen['grpc-timeout'], seen['x-long']],
        ['POST', '/etcdserverpb.KV/Range', 'application/grpc', 'trailers', '1234m', 'y'.repeat(300)],
      );
    } finally {
      s.destroy(new Error('test over'));
    }
  });
});
