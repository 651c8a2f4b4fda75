// freePort: a port the caller can bind, below the kernel's ephemeral range where it has one
// (outgoing connections take their source ports from that range), never the same one twice.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ephemeralPortRange, freePort } from './process';

describe('shared/cluster: freePort', () => {
  it('hands out distinct bindable ports below the ephemeral range', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    assert.equal(new Set(ports).size, ports.length, 'a port handed out twice');
    const low = ephemeralPortRange()?.[0];
    if (low !== undefined && low > 12_000)
      for (const p of ports) assert.ok(p < low, `port ${p} in the ephemeral range`);
    // Each can be bound, and a bound one is not handed out.
    const s = createServer();
    await new Promise<void>((r) => s.listen(ports[0], '127.0.0.1', r));
    try {
      for (let i = 0; i < 20; i++) assert.notEqual(await freePort(), ports[0]);
    } finally {
      await new Promise((r) => s.close(r));
    }
  });
});
