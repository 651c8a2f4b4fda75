// KeyTurns: updates of one key one at a time, in arrival order, each handed what
// the one before it stored; other keys never wait; a failed turn passes nothing on.
import assert from 'node:assert/strict';
import { KeyTurns, type StoredState } from './key-turns';

const state = (key: string, rev: number): StoredState => ({
  key,
  value: Buffer.from(`v${rev}`),
  modRevision: rev,
});
const tick = () => new Promise((r) => setImmediate(r));

describe('KeyTurns', () => {
  it('runs the updates of one key in arrival order, handing each the state stored before it', async () => {
    const turns = new KeyTurns();
    const log: string[] = [];
    const seen: (number | undefined)[] = [];
    const update = async (i: number) => {
      const t = await turns.take('/k');
      seen.push(t.previous?.modRevision);
      log.push(`start ${i}`);
      await tick();
      await tick();
      log.push(`end ${i}`);
      t.end(state('/k', 10 + i));
    };
    await Promise.all([0, 1, 2, 3].map(update));
    assert.deepEqual(log, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    assert.deepEqual(seen, [undefined, 10, 11, 12]);
    assert.equal(turns.size, 0, 'an idle key keeps nothing');
  });

  it('lets other keys through while one is busy', async () => {
    const turns = new KeyTurns();
    const a = await turns.take('/a');
    const b = await Promise.race([turns.take('/b'), tick().then(() => 'waited')]);
    assert.notEqual(b, 'waited');
    (b as Awaited<ReturnType<KeyTurns['take']>>).end(undefined);
    a.end(undefined);
  });

  it('passes nothing on from a turn that stored nothing, and ends a turn once', async () => {
    const turns = new KeyTurns();
    const first = await turns.take('/k');
    const second = turns.take('/k');
    const third = turns.take('/k');
    first.end(state('/k', 5));
    const s = await second;
    assert.equal(s.previous?.modRevision, 5);
    s.end(undefined);
    s.end(state('/k', 99)); // a second end changes nothing
    const t = await third;
    assert.equal(t.previous, undefined);
    t.end(undefined);
    assert.equal(turns.size, 0);
  });
});
