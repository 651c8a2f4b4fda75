// Acknowledged writes survive a crash: a child process writes keys from 32
// concurrent writers, printing each acknowledgement, and is killed with SIGKILL
// mid-stream. Reopening must find every acknowledged key, with its revision,
// and no partial batch. Three rounds on the same directory, each reopening the
// previous crash.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { openAt, tempDir } from './test-util';

const CHILD = path.join(__dirname, 'durability-child.js');

/** Runs the child until it has acknowledged `killAfter` writes, then SIGKILLs it. */
async function crashRun(dir: string, round: number, killAfter: number): Promise<Map<string, number>> {
  const child = spawn(process.execPath, [CHILD, dir, String(round), '100000'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acked = new Map<string, number>();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const [key, rev] = line.split(' ');
      acked.set(key, Number(rev));
      if (acked.size === killAfter) child.kill('SIGKILL');
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  const signal = await exited;
  assert.equal(signal, 'SIGKILL', `child ended on its own: ${stderr}`);
  return acked;
}

describe('embedded: durability', function () {
  this.timeout(60_000);

  it('keeps every acknowledged write when the process is killed mid-stream', async () => {
    const tmp = tempDir();
    try {
      const everAcked = new Map<string, number>();
      for (let round = 0; round < 3; round++) {
        const acked = await crashRun(tmp.dir, round, 1500 + round * 500);
        assert.ok(acked.size >= 1500 + round * 500);
        for (const [k, v] of acked) everAcked.set(k, v);
        const s = await openAt(tmp.dir);
        try {
          for (const [key, rev] of everAcked) {
            const kv = (await s.get(key)).kv;
            assert.ok(kv, `acknowledged ${key} is missing after the crash`);
            assert.equal(kv.modRevision, rev);
            assert.equal(kv.value.toString(), `value of ${key}`);
          }
          // Whole batches or nothing: the revisions present are exactly 2..current.
          const all = await s.range('/durable/');
          const current = await s.currentRevision();
          const revs = all.kvs.map((kv) => kv.modRevision).sort((a, b) => a - b);
          assert.deepEqual(
            revs,
            Array.from({ length: current - 1 }, (_, i) => i + 2),
          );
          // The log agrees: replaying everything gives one create per key.
          const w = s.watch('/durable/', 1);
          let events = 0;
          for await (const batch of w) {
            events += batch.length;
            if (events >= all.kvs.length) break;
          }
          assert.equal(events, all.kvs.length);
        } finally {
          await s.close();
        }
      }
    } finally {
      tmp.remove();
    }
  });
});
