import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import { SPDY_DICTIONARY } from './spdy-dictionary';
import { tcpPair } from './test-support';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FrameType,
  parseFrames,
  SpdyConnection,
  type SpdyStream,
} from './spdy';

function adler32(b: Buffer): number {
  let a = 1;
  let s = 0;
  for (const x of b) {
    a = (a + x) % 65521;
    s = (s + a) % 65521;
  }
  return ((s << 16) | a) >>> 0;
}

/** Two sessions on the ends of a real TCP connection on 127.0.0.1. */
async function pair(): Promise<{ client: SpdyConnection; server: SpdyConnection; close(): void }> {
  const tcp = await tcpPair();
  return {
    client: new SpdyConnection(tcp.client, 'client'),
    server: new SpdyConnection(tcp.server, 'server'),
    close: tcp.close,
  };
}

/** Opens a stream on one session: both of its ends, once the other session has it. */
async function open(
  from: SpdyConnection,
  to: SpdyConnection,
  streamtype: string,
): Promise<[SpdyStream, SpdyStream]> {
  const got = new Promise<SpdyStream>((r) => to.once('stream', r));
  const s = await from.createStream({ streamtype });
  return [s, await got];
}

const read = (s: SpdyStream) =>
  new Promise<string>((resolve) => {
    let out = '';
    s.on('data', (d: Buffer) => (out += d));
    s.on('end', () => resolve(out));
  });

describe('SPDY/3.1 framing', () => {
  it('has the SPDY/3 header dictionary (1423 bytes, Adler-32 e3c6a7c2)', () => {
    assert.equal(SPDY_DICTIONARY.length, 1423);
    assert.equal(adler32(SPDY_DICTIONARY).toString(16), 'e3c6a7c2');
  });

  it('decodes a SYN_STREAM header block as moby/spdystream compresses it', async () => {
    // A zlib stream that starts with the dictionary's id, as Go's compress/zlib writes it.
    const block = encodeHeaderBlock({ streamtype: ['stdout'] });
    const z = zlib.deflateSync(block, { dictionary: SPDY_DICTIONARY });
    assert.equal(z.readUInt32BE(2).toString(16), 'e3c6a7c2');
    assert.deepEqual(decodeHeaderBlock(zlib.inflateSync(z, { dictionary: SPDY_DICTIONARY })), {
      streamtype: ['stdout'],
    });
  });

  it('round-trips name/value blocks, joining several values with NUL and lowering names', () => {
    const b = encodeHeaderBlock({ StreamType: ['data'], port: ['80', '8080'] });
    assert.deepEqual(decodeHeaderBlock(b), { streamtype: ['data'], port: ['80', '8080'] });
    assert.throws(() => decodeHeaderBlock(b.subarray(0, b.length - 2)), /truncated/);
  });

  it('splits frames at their boundaries and keeps a partial frame for later', () => {
    const a = controlFrame(FrameType.PING, 0, Buffer.from([0, 0, 0, 1]));
    const d = dataFrame(3, 1, Buffer.from('hello'));
    const all = Buffer.concat([a, d]);
    const { frames, rest } = parseFrames(all.subarray(0, all.length - 2));
    assert.equal(frames.length, 1);
    assert.deepEqual(frames[0], {
      control: true,
      type: FrameType.PING,
      flags: 0,
      payload: Buffer.from([0, 0, 0, 1]),
    });
    const more = parseFrames(Buffer.concat([rest, all.subarray(all.length - 2)]));
    assert.deepEqual(more.frames, [{ control: false, streamId: 3, flags: 1, data: Buffer.from('hello') }]);
    assert.throws(() => parseFrames(Buffer.from([0x80, 2, 0, 1, 0, 0, 0, 0])), /unsupported SPDY version 2/);
  });

  it('opens streams with headers, carries data both ways and half-closes each side', async () => {
    const p = await pair();
    try {
      const seen: SpdyStream[] = [];
      p.server.on('stream', (s: SpdyStream) => {
        seen.push(s);
        // Echo in upper case, then close this side.
        const parts: string[] = [];
        s.on('data', (d: Buffer) => parts.push(String(d)));
        s.on('end', () => s.end(parts.join('').toUpperCase()));
      });
      const streams = await Promise.all(
        ['stdin', 'stdout', 'error'].map((t) => p.client.createStream({ streamtype: t, port: '80' })),
      );
      assert.deepEqual(
        streams.map((s) => s.id),
        [1, 3, 5],
      );
      const big = 'x'.repeat(100_000);
      const replies = streams.map(read);
      streams[0].end('hello ');
      streams[1].end(big);
      streams[2].end();
      assert.deepEqual(await Promise.all(replies), ['HELLO ', big.toUpperCase(), '']);
      assert.deepEqual(
        seen.map((s) => [s.header('streamtype'), s.header('port')]),
        [
          ['stdin', '80'],
          ['stdout', '80'],
          ['error', '80'],
        ],
      );
    } finally {
      p.close();
    }
  });

  it('a reset ends the stream on the other side; closing the session ends every stream', async () => {
    const p = await pair();
    try {
      const [s, remote] = await open(p.client, p.server, 'data');
      const remoteClosed = new Promise((r) => remote.once('close', r));
      remote.resume();
      s.reset();
      await remoteClosed;
      const other = await p.client.createStream({ streamtype: 'data' });
      other.write('unread');
      const ended = new Promise((r) => other.once('end', r));
      other.resume();
      const serverClosed = new Promise((r) => p.server.once('close', r));
      p.client.close();
      await Promise.all([ended, serverClosed]);
      await assert.rejects(p.client.createStream({ streamtype: 'data' }), /session closed/);
    } finally {
      p.close();
    }
  });

  it('a reset keeps what came before it for a reader that has not taken it yet', async () => {
    // As Kubernetes' servers do when a command ends: its last output, then a reset of every stream.
    const p = await pair();
    try {
      const [s, local] = await open(p.server, p.client, 'stdout');
      local.pause();
      // Under the stream's high-water mark, so the session goes on reading the socket.
      const sent = Buffer.alloc(200 * 1024);
      for (let i = 0; i < sent.length; i += 4) sent.writeUInt32BE(i, i);
      s.write(sent);
      s.reset();
      // The client has handled the reset once it answers a stream opened after it.
      await open(p.server, p.client, 'marker');
      assert.ok(!local.destroyed && local.readableLength > 0, 'output waits unread');
      const parts: Buffer[] = [];
      local.on('data', (d: Buffer) => parts.push(d));
      const closed = new Promise((r) => local.once('close', r));
      local.resume();
      await closed;
      assert.ok(local.readableEnded, 'the stream ended rather than being torn down');
      assert.ok(Buffer.concat(parts).equals(sent), `${Buffer.concat(parts).length} of ${sent.length} bytes`);
    } finally {
      p.close();
    }
  });

  it('frames that came before the connection closed are all handled', async () => {
    // A stream opened, written and closed in one go: the headers of its SYN_STREAM are still
    // being decompressed when the end of the socket arrives.
    const tcp = await tcpPair();
    const raw = tcp.client;
    const server = new SpdyConnection(tcp.server, 'server');
    try {
      const frames: Buffer[] = [];
      const capture = new Duplex({
        read() {},
        write(chunk: Buffer, _enc, cb) {
          frames.push(chunk);
          cb();
        },
      });
      void new SpdyConnection(capture, 'client').createStream({ streamtype: 'stdout' }).catch(() => {});
      while (!frames.length) await new Promise((r) => setImmediate(r));
      const got = new Promise<SpdyStream>((r) => server.once('stream', r));
      raw.end(Buffer.concat([...frames, dataFrame(1, 0, Buffer.from('last words'))]));
      assert.equal(await read(await got), 'last words');
    } finally {
      tcp.close();
    }
  });

  it('a reader that lags holds the sender back instead of buffering everything it sent', async () => {
    const p = await pair();
    try {
      const [s, remote] = await open(p.client, p.server, 'stdout');
      remote.pause(); // nobody reads yet
      const total = 32 * 1024 * 1024;
      const chunk = Buffer.alloc(64 * 1024, 'z');
      let written = 0;
      let blocked = false;
      // Write until the stream pushes back (or everything went out: the test fails below).
      while (written < total) {
        written += chunk.length;
        if (!s.write(chunk)) {
          await Promise.race([
            new Promise((r) => s.once('drain', r)),
            new Promise((r) => setTimeout(r, 500)).then(() => (blocked = true)),
          ]);
          if (blocked) break;
        }
      }
      assert.ok(blocked, 'the sender was held back');
      assert.ok(written < total, `only part of the ${total} bytes left: ${written}`);
      // What the lagging reader holds stays near its high-water mark, not everything sent.
      assert.ok(remote.readableLength < 4 * 1024 * 1024, `reader buffers ${remote.readableLength} bytes`);
      // Reading again lets the rest through, in order and complete.
      let received = 0;
      const done = new Promise<void>((r) => remote.on('end', r));
      remote.on('data', (d: Buffer) => {
        for (const b of [d[0], d[d.length - 1]]) assert.equal(b, 0x7a);
        received += d.length;
      });
      remote.resume();
      while (written < total) {
        written += chunk.length;
        if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
      }
      s.end();
      await done;
      assert.equal(received, total);
    } finally {
      p.close();
    }
  });
});
