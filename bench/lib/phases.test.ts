// The lone create's breakdown: samples in the window go to the innermost frame that
// belongs to a phase; idle is apart; samples outside the window do not count.
import assert from 'node:assert/strict';
import type { Profile } from './cpu-profile';
import { IDLE, phaseBreakdown } from './phases';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0, columnNumber: 0 });

// root ─┬─ handle (server) ─┬─ admit (admission) ─┬─ encode (codec)
//       │                   │                     └─ (native leaf, no url)
//       │                   └─ commit (storage)
//       └─ (idle)
const profile = (samples: number[], deltas: number[]): Profile => ({
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 6] },
    { id: 2, callFrame: frame('handle', 'file:///x/dist/apiserver/server/server.js'), children: [3, 5] },
    {
      id: 3,
      callFrame: frame('admit', 'file:///x/dist/apiserver/auth/admission/chain.js'),
      children: [4, 7],
    },
    { id: 4, callFrame: frame('encodeObject', 'file:///x/dist/shared/codec/json.js') },
    { id: 5, callFrame: frame('commit', 'file:///x/dist/apiserver/storage/embedded/writer.js') },
    { id: 6, callFrame: frame('(idle)') },
    { id: 7, callFrame: frame('writev') },
  ],
  startTime: 1000,
  endTime: 0,
  samples,
  timeDeltas: deltas,
});

describe('bench: phase breakdown of a profile', () => {
  it('gives each sample in the window to the innermost phase of its stack, idle apart, per operation', () => {
    // Sample times 1000, 1100, ..., each lasting 100 µs; the window [1100, 1700) holds six of them.
    const samples = [4, 4, 7, 5, 6, 6, 2, 4, 5];
    const p = profile(
      samples,
      samples.map((_, i) => (i === 0 ? 0 : 100)),
    );
    const rows = phaseBreakdown(p, 1100, 1700, 2);
    const got = Object.fromEntries(rows.map((r) => [r.phase, r.usPerOp]));
    assert.deepEqual(got, {
      'encode (storage and answer)': 50, // one codec sample (the first is before the window)
      admission: 50, // the native leaf under admit
      'store write (commit; the fsyncs run off this thread)': 50,
      'request read, routing, filters': 50, // handle itself
      [IDLE]: 100,
    });
    assert.equal(rows[rows.length - 1].phase, IDLE, 'idle is listed last');
  });

  it("gives Node's socket writes to the caller that made them: the etcd client's to the store", () => {
    const p: Profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), children: [2, 4] },
        { id: 2, callFrame: frame('call', 'file:///x/shared/http2/client-session.ts'), children: [3] },
        { id: 3, callFrame: frame('writeGeneric', 'node:net') },
        { id: 4, callFrame: frame('send', 'file:///x/apiserver/server/http.ts'), children: [5] },
        { id: 5, callFrame: frame('writeGeneric', 'node:net') },
        { id: 6, callFrame: frame('flush', 'file:///x/shared/http2/frames.ts') },
      ],
      startTime: 0,
      endTime: 0,
      samples: [3, 5, 6],
      timeDeltas: [0, 10, 10, 10],
    };
    p.nodes[0].children!.push(6);
    const got = Object.fromEntries(phaseBreakdown(p, 0, 100, 1).map((r) => [r.phase, r.usPerOp]));
    assert.deepEqual(got, {
      'store write (commit; the fsyncs run off this thread)': 10,
      // under http.ts, and the framing with no caller of a phase falls back to its own
      'response write (HTTP, TLS)': 20,
    });
  });

  it('counts nothing outside the window', () => {
    const p = profile([4, 5, 6], [0, 100, 100]);
    assert.deepEqual(phaseBreakdown(p, 5000, 6000, 1), []);
  });
});
