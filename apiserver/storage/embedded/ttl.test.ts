// TTL keys with an injected clock: deadlines persist across restarts, and
// rewriting or deleting a key takes its deadline along.
import assert from 'node:assert/strict';
import { collect } from '../conformance';
import type { EmbeddedStorage } from './index';
import { FakeClock, openAt, tempDir } from './test-util';

const T0 = Date.UTC(2030, 0, 1);

describe('embedded: TTL', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  let s: EmbeddedStorage | null = null;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(async () => {
    await s?.close();
    s = null;
    tmp.remove();
  });

  it('keeps a deadline across a reopen and expires the key once it has passed', async () => {
    const clock = new FakeClock(T0);
    s = await openAt(tmp.dir, { clock });
    const kv = await s.create('/ttl/k', Buffer.from('v'), { ttlSeconds: 60 });
    assert.equal(kv.lease, T0 + 60_000);
    await s.close();

    clock.ms = T0 + 30_000;
    s = await openAt(tmp.dir, { clock });
    assert.equal(await s.expireDue(), 0);
    assert.equal((await s.get('/ttl/k')).kv?.lease, T0 + 60_000);
    await s.close();

    // Opened after the deadline: expires on its own, as a delete at the next revision.
    clock.ms = T0 + 61_000;
    s = await openAt(tmp.dir, { clock });
    const w = s.watch('/ttl/', kv.modRevision);
    const [del] = await collect(w, 1, 5000);
    w.stop();
    assert.equal(del?.type, 'delete');
    assert.equal(del.revision, kv.modRevision + 1);
    assert.equal(del.prevKv?.value.toString(), 'v');
    assert.equal((await s.get('/ttl/k')).kv, null);
  });

  it('moves or drops the deadline when the key is rewritten, and forgets it on delete', async () => {
    const clock = new FakeClock(T0);
    s = await openAt(tmp.dir, { clock });
    const a = await s.create('/ttl/a', Buffer.from('a'), { ttlSeconds: 10 });
    await s.update('/ttl/a', Buffer.from('a2'), a.modRevision); // no TTL: lives on
    const b = await s.create('/ttl/b', Buffer.from('b'), { ttlSeconds: 10 });
    await s.update('/ttl/b', Buffer.from('b2'), b.modRevision, { ttlSeconds: 100 });
    const c = await s.create('/ttl/c', Buffer.from('c'), { ttlSeconds: 10 });
    await s.delete('/ttl/c', c.modRevision);
    const rev = await s.currentRevision();

    clock.ms = T0 + 20_000;
    assert.equal(await s.expireDue(), 0);
    assert.equal(await s.currentRevision(), rev, 'nothing written');
    assert.equal(await s.count('/ttl/'), 2);

    clock.ms = T0 + 101_000;
    assert.equal(await s.expireDue(), 1);
    assert.equal((await s.get('/ttl/b')).kv, null);
    assert.equal((await s.get('/ttl/a')).kv?.value.toString(), 'a2');
  });

  it('expires many keys in one pass', async () => {
    const clock = new FakeClock(T0);
    s = await openAt(tmp.dir, { clock });
    await Promise.all(
      Array.from({ length: 2500 }, (_, i) =>
        s!.create(`/ttl/m/${i}`, Buffer.from('x'), { ttlSeconds: 1 + (i % 7) }),
      ),
    );
    await s.create('/ttl/keep', Buffer.from('x'));
    clock.ms = T0 + 8000;
    assert.equal(await s.expireDue(), 2500);
    assert.equal(await s.count('/ttl/'), 1);
  });

  it('refuses a negative TTL', async () => {
    s = await openAt(tmp.dir);
    await assert.rejects(s.create('/ttl/n', Buffer.from('x'), { ttlSeconds: -1 }), { code: 'InvalidObject' });
  });
});
