import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { tcpPair } from './test-support';
import { splice } from './upgrade';

describe('splice of two upgraded connections', () => {
  it('an upstream that resets after its last bytes: what was read from it still reaches a slow client', async () => {
    const tcp = await tcpPair();
    const { client: toUpstream, server: upstream } = tcp;
    // The client's side: takes each write only when let (a client that reads slowly).
    const received: Buffer[] = [];
    const held: (() => void)[] = [];
    const client = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        held.push(() => {
          received.push(chunk);
          cb();
        });
      },
    });
    try {
      const spliced = splice(client, toUpstream);
      // Two reads' worth: the first is being written to the client, the second waits behind it.
      const sent = [Buffer.alloc(4096, 'a'), Buffer.alloc(4096, 'b')];
      for (const part of sent) {
        await new Promise<void>((r) => upstream.write(part, () => r()));
        const before = client.writableLength + held.length;
        while (client.writableLength + held.length === before) await new Promise((r) => setTimeout(r, 5));
      }
      upstream.resetAndDestroy();
      await new Promise<void>((r) => toUpstream.once('close', () => r()));
      for (let i = 0; i < 50 && Buffer.concat(received).length < 8192; i++) {
        held.splice(0).forEach((f) => f());
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(
        Buffer.concat(received).equals(Buffer.concat(sent)),
        `${Buffer.concat(received).length} bytes`,
      );
      client.destroy();
      await spliced;
    } finally {
      tcp.close();
    }
  });
});
