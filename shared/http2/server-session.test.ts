// tkube's HTTP/2 server session against node:http2's client (nghttp2: Huffman
// and indexed header fields, its own flow control), over plain TCP with prior
// knowledge; protocol errors with hand-made frames.
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { FrameReader, FrameType, PREFACE, type Frame, frame, settings } from './frames';
import { ServerSession, type ServerStream } from './server-session';

interface Harness {
  url: string;
  sessions: ServerSession[];
  close(): Promise<void>;
}

/** A TCP server whose connections are ServerSessions; `onStream` answers each request. */
async function serve(onStream: (s: ServerStream) => void, maxConcurrentStreams = 100): Promise<Harness> {
  const sessions: ServerSession[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    sessions.push(new ServerSession(socket, { maxConcurrentStreams, onStream }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Collects a stream's request body, then calls `answer`. */
function withBody(answer: (s: ServerStream, body: Buffer) => void): (s: ServerStream) => void {
  return (s) => {
    const parts: Buffer[] = [];
    s.onData = (c) => {
      parts.push(Buffer.from(c));
      s.consumed(c.length);
    };
    s.onEnd = () => answer(s, Buffer.concat(parts));
  };
}

interface Reply {
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

function request(
  client: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body?: Buffer,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = client.request(headers, { endStream: !body });
    let head: http2.IncomingHttpHeaders = {};
    const parts: Buffer[] = [];
    req.on('response', (h) => (head = h));
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve({ headers: head, body: Buffer.concat(parts) }));
    req.on('error', reject);
    if (body) req.end(body);
  });
}

describe('HTTP/2 server session (shared/http2/server-session.ts)', function () {
  this.timeout(20_000);
  let h: Harness | undefined;
  let client: http2.ClientHttp2Session | undefined;
  afterEach(async () => {
    client?.destroy();
    client = undefined;
    await h?.close();
    h = undefined;
  });

  it('answers a GET with its status, header fields and body, and keeps repeated request fields', async () => {
    let seen: [string, string][] = [];
    h = await serve((s) => {
      seen = s.fields;
      s.respond(
        203,
        [
          ['content-type', 'text/plain'],
          ['x-many', 'a'],
          ['x-many', 'b'],
        ],
        false,
      );
      s.write(Buffer.from('hello '));
      s.write(Buffer.from('world'), true);
    });
    client = http2.connect(h.url);
    const r = await request(client, {
      ':path': '/a/b?c=d',
      'impersonate-group': ['g1', 'g2'],
      'user-agent': 'test',
    });
    assert.equal(r.headers[':status'], 203);
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.headers['x-many'], 'a, b');
    assert.equal(r.body.toString(), 'hello world');
    assert.deepEqual(
      seen.filter(([n]) => n === 'impersonate-group'),
      [
        ['impersonate-group', 'g1'],
        ['impersonate-group', 'g2'],
      ],
    );
    assert.ok(seen.some(([n, v]) => n === ':path' && v === '/a/b?c=d'));
    assert.ok(seen.some(([n, v]) => n === ':method' && v === 'GET'));
  });

  it('takes a request body far beyond its windows, given back as it is read', async () => {
    h = await serve(
      withBody((s, body) => {
        s.respond(200, [], false);
        s.write(Buffer.from(String(body.length) + ' ' + body.subarray(-5).toString()), true);
      }),
    );
    client = http2.connect(h.url);
    const body = Buffer.alloc(5 << 20, 'x');
    body.write('tail!', body.length - 5);
    const r = await request(client, { ':path': '/', ':method': 'POST' }, body);
    assert.equal(r.body.toString(), `${5 << 20} tail!`);
  });

  it('sends an answer far beyond the client windows as the client opens them', async () => {
    const big = Buffer.alloc(3 << 20);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    let firstWrite: boolean | undefined;
    h = await serve((s) => {
      s.respond(200, [], false);
      firstWrite = s.write(big, true);
    });
    // node's client starts with 64 KB windows and opens them as it reads.
    client = http2.connect(h.url);
    const r = await request(client, { ':path': '/' });
    assert.equal(firstWrite, false, 'a write held back by the window asks the writer to wait');
    assert.ok(r.body.equals(big));
  });

  it('tells the writer when held-back data has gone out (onDrain)', async () => {
    let drains = 0;
    h = await serve((s) => {
      s.respond(200, [], false);
      let n = 0;
      const more = () => {
        while (n < 40) {
          n++;
          if (!s.write(Buffer.alloc(64 << 10, n), n === 40)) return;
        }
      };
      s.onDrain = () => {
        drains++;
        more();
      };
      more();
    });
    client = http2.connect(h.url);
    const r = await request(client, { ':path': '/' });
    assert.equal(r.body.length, 40 * (64 << 10));
    assert.equal(r.body[r.body.length - 1], 40);
    assert.ok(drains > 0);
  });

  it('ends a stream the client resets, and its data stops', async () => {
    let closed: boolean | undefined;
    let streamOpen: ServerStream | undefined;
    h = await serve((s) => {
      streamOpen = s;
      s.onClose = (reset) => (closed = reset);
      s.respond(200, [], false);
      s.write(Buffer.from('first'));
    });
    client = http2.connect(h.url);
    const req = client.request({ ':path': '/watch' });
    await new Promise<void>((r) => req.once('data', () => r()));
    req.close(http2.constants.NGHTTP2_CANCEL);
    for (let i = 0; i < 100 && closed === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(closed, true);
    assert.equal(streamOpen!.write(Buffer.from('late')), false);
    assert.equal(h.sessions[0].size, 0);
  });

  it('refuses streams beyond SETTINGS_MAX_CONCURRENT_STREAMS', async () => {
    h = await serve((s) => {
      // Never answered: each stays open.
      s.respond(200, [], false);
    }, 2);
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    const frames: Frame[] = [];
    const reader = new FrameReader(1 << 24, (f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
    socket.on('data', (c) => reader.push(c));
    // HEADERS with END_STREAM|END_HEADERS: ':method: GET' ':path: /' (static 2 and 4), ':scheme: http' (6).
    const get = (id: number) => frame(FrameType.HEADERS, 0x5, id, Buffer.from([0x82, 0x84, 0x86]));
    socket.write(Buffer.concat([PREFACE, settings([]), get(1), get(3), get(5)]));
    for (let i = 0; i < 100 && !frames.some((f) => f.type === FrameType.RST_STREAM); i++)
      await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    const rst = frames.filter((f) => f.type === FrameType.RST_STREAM);
    assert.deepEqual(
      rst.map((f) => [f.id, f.payload.readUInt32BE(0)]),
      [[5, http2.constants.NGHTTP2_REFUSED_STREAM]],
    );
    const maxStreams = frames.find((f) => f.type === FrameType.SETTINGS && f.payload.length)!.payload;
    assert.equal(maxStreams.readUInt16BE(0), 0x3);
    assert.equal(maxStreams.readUInt32BE(2), 2);
  });

  it('GOAWAY: the stream under way finishes, no new one starts, then the connection closes', async () => {
    let pending: ServerStream | undefined;
    h = await serve((s) => {
      pending = s;
    });
    client = http2.connect(h.url);
    const first = request(client, { ':path': '/slow' });
    for (let i = 0; i < 100 && !pending; i++) await new Promise((r) => setTimeout(r, 10));
    const goaway = new Promise<number>((r) => client!.once('goaway', (code) => r(code)));
    h.sessions[0].goaway();
    assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
    pending!.respond(200, [], false);
    pending!.write(Buffer.from('done'), true);
    assert.equal((await first).body.toString(), 'done');
    await new Promise<void>((r) => (client!.closed ? r() : client!.once('close', () => r())));
  });

  it('answers PING, and HEADERS-only answers end the stream', async () => {
    h = await serve((s) => s.respond(204, [['x-a', '1']], true));
    client = http2.connect(h.url);
    const r = await request(client, { ':path': '/' });
    assert.equal(r.headers[':status'], 204);
    assert.equal(r.body.length, 0);
    const rtt = await new Promise<number>((resolve, reject) =>
      client!.ping((err, ms) => (err ? reject(err) : resolve(ms))),
    );
    assert.ok(rtt >= 0);
  });

  it('writes one event to many streams of one connection in one turn, each in order', async () => {
    const streams: ServerStream[] = [];
    h = await serve((s) => {
      s.respond(200, [], false);
      streams.push(s);
    }, 1000);
    client = http2.connect(h.url);
    const n = 200;
    const got = Array.from({ length: n }, () => [] as string[]);
    const reqs = Array.from({ length: n }, (_, i) => {
      const req = client!.request({ ':path': `/w/${i}` });
      req.setEncoding('utf8');
      req.on('data', (c: string) => got[i].push(...c.split('\n').filter(Boolean)));
      return req;
    });
    for (let i = 0; i < 100 && streams.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    for (let e = 0; e < 5; e++) {
      const ev = Buffer.from(`event-${e}\n`);
      for (const s of streams) s.write(ev, e === 4);
    }
    await Promise.all(reqs.map((r) => new Promise((res) => r.on('end', res))));
    for (const lines of got) assert.deepEqual(lines, ['event-0', 'event-1', 'event-2', 'event-3', 'event-4']);
  });

  it('resets a stream whose client sends beyond the window it was given', async () => {
    let reset: boolean | undefined;
    h = await serve((s) => {
      // Never reads the body: the window is never given back.
      s.onClose = (r) => (reset = r);
    });
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    const frames: Frame[] = [];
    const reader = new FrameReader(1 << 24, (f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
    socket.on('data', (c) => reader.push(c));
    // HEADERS (END_HEADERS, not END_STREAM) for a POST, then 20 DATA frames of 16,000 bytes: 320 KB.
    const parts = [PREFACE, settings([]), frame(FrameType.HEADERS, 0x4, 1, Buffer.from([0x83, 0x84, 0x86]))];
    for (let i = 0; i < 20; i++) parts.push(frame(FrameType.DATA, 0, 1, Buffer.alloc(16_000)));
    socket.write(Buffer.concat(parts));
    for (let i = 0; i < 100 && !frames.some((f) => f.type === FrameType.RST_STREAM); i++)
      await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    const rst = frames.find((f) => f.type === FrameType.RST_STREAM);
    assert.ok(rst, 'RST_STREAM');
    assert.equal(rst.payload.readUInt32BE(0), http2.constants.NGHTTP2_FLOW_CONTROL_ERROR);
    assert.equal(reset, true);
  });

  it('cuts off a client that resets streams without end (rapid reset) with ENHANCE_YOUR_CALM', async () => {
    let opened = 0;
    h = await serve(() => opened++);
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    const frames: Frame[] = [];
    const reader = new FrameReader(1 << 24, (f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
    socket.on('data', (c) => reader.push(c));
    socket.on('error', () => {});
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(http2.constants.NGHTTP2_CANCEL, 0);
    const parts = [PREFACE, settings([])];
    // Each stream opened and reset at once: never more than one open, 1,200 in all.
    for (let i = 0; i < 1200; i++) {
      const id = 2 * i + 1;
      parts.push(frame(FrameType.HEADERS, 0x4, id, Buffer.from([0x82, 0x84, 0x86])));
      parts.push(frame(FrameType.RST_STREAM, 0, id, cancel));
    }
    socket.write(Buffer.concat(parts));
    await new Promise<void>((r) => socket.on('close', () => r()));
    const away = frames.find((f) => f.type === FrameType.GOAWAY);
    assert.ok(away, 'a GOAWAY before the close');
    assert.equal(away.payload.readUInt32BE(4), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    assert.ok(opened >= 1000 && opened < 1200, `streams started before the cut: ${opened}`);
  });

  it('ends a connection whose header block grows past 1 MB with GOAWAY', async () => {
    h = await serve(() => assert.fail('no stream expected'));
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    const frames: Frame[] = [];
    const reader = new FrameReader(1 << 24, (f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
    socket.on('data', (c) => reader.push(c));
    socket.on('error', () => {});
    // HEADERS without END_HEADERS, then CONTINUATION frames of a never-ending literal.
    const parts = [PREFACE, settings([]), frame(FrameType.HEADERS, 0x1, 1, Buffer.from([0x82, 0x84, 0x86]))];
    for (let i = 0; i < 70; i++) parts.push(frame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(16_000, 0x61)));
    socket.write(Buffer.concat(parts));
    await new Promise<void>((r) => socket.on('close', () => r()));
    const away = frames.find((f) => f.type === FrameType.GOAWAY);
    assert.ok(away, 'a GOAWAY before the close');
    assert.equal(away.payload.readUInt32BE(4), http2.constants.NGHTTP2_PROTOCOL_ERROR);
  });

  it('closes a connection that does not start with the HTTP/2 preface', async () => {
    h = await serve(() => assert.fail('no stream expected'));
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    socket.on('data', () => {});
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((r) => socket.on('close', () => r()));
    assert.ok(h.sessions[0].destroyed);
  });
});
