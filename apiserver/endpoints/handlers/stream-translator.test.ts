import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { tcpPair } from '../../../shared/streaming/test-support';
import { tunnel } from './stream-translator';

describe('the port-forward tunnel (WebSocket to a connection)', () => {
  it('a connection that fails: what was read from it still reaches a client that reads slowly', async () => {
    // The node agent's side: a TCP connection whose far end writes.
    const tcp = await tcpPair();
    const { client: backend, server: far } = tcp;
    far.on('error', () => {}); // reset once the tunnel's side goes

    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    // Settles when the tunnel does.
    const tunnelled = new Promise<void>((r) => wss.once('connection', (ws) => r(tunnel(ws, backend))));
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, {
      perMessageDeflate: false,
    });
    const received: Buffer[] = [];
    client.on('message', (d) => received.push(d as Buffer));
    const closed = new Promise<number>((r) => client.once('close', (code) => r(code)));
    try {
      await new Promise<void>((r) => client.once('open', () => r()));
      // The client stops reading: what the tunnel sends piles up in its socket's buffers.
      client.pause();
      const sent = Buffer.alloc(16 << 20);
      for (let i = 0; i < sent.length; i += 4) sent.writeUInt32BE(i, i);
      let taken = 0;
      backend.on('data', (d: Buffer) => (taken += d.length));
      far.write(sent);
      // The tunnel reads until the WebSocket holds a megabyte it cannot send, then waits.
      while (taken < sent.length && !backend.isPaused()) await new Promise((r) => setTimeout(r, 5));
      assert.ok(taken > 1 << 20, `${taken} bytes taken`);
      // The connection fails (as a reset or a failed write makes it) while the tunnel waits.
      backend.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      client.resume();
      assert.equal(await closed, 1000);
      const got = Buffer.concat(received);
      assert.equal(got.length, taken);
      assert.ok(got.equals(sent.subarray(0, taken)));
      await tunnelled;
    } finally {
      client.terminate();
      tcp.close();
      wss.close();
    }
  });
});
