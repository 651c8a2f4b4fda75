// Updates of one object within this apiserver take turns, and each starts from
// the state the one before it stored.
//
// Without turns, updates of a hot object (a client PUTting it many times a
// second) race: each starts from the watch cache, which lags the last commit,
// loses the store's compare, and starts again; with k of them in flight every
// commit costs k computations (admission, validation, ownership, encoding), and
// a slow moment turns into a queue that never drains. In turns, each update
// computes once, from a state that is current unless another writer (another
// apiserver, another version's store) got in between — which the store's
// compare still catches, as before: turns save work, correctness never rests
// on them.

import type { KeyValue } from '../storage/interface';

/** What an update stored: enough to decode the object as a read of the store would. */
export type StoredState = Pick<KeyValue, 'key' | 'value' | 'modRevision'>;

interface Line {
  /** Updates holding or waiting for a turn. */
  holders: number;
  /** Settles when the last update in line ends its turn. */
  tail: Promise<void>;
  /** What the update that ended last stored; undefined when unknown (it failed, or deleted). */
  stored: StoredState | undefined;
}

export class KeyTurn {
  constructor(
    /** What the update before this one stored, if known. */
    readonly previous: StoredState | undefined,
    private readonly done: (stored: StoredState | undefined) => void,
  ) {}

  /** Hands the next update what this one stored (undefined: nothing known), and lets it go. */
  end(stored: StoredState | undefined): void {
    this.done(stored);
  }
}

export class KeyTurns {
  private readonly lines = new Map<string, Line>();

  /** Waits until the key's earlier updates have ended their turns. */
  async take(key: string): Promise<KeyTurn> {
    let line = this.lines.get(key);
    if (!line) {
      line = { holders: 0, tail: Promise.resolve(), stored: undefined };
      this.lines.set(key, line);
    }
    const l = line;
    l.holders++;
    const before = l.tail;
    let release!: () => void;
    l.tail = new Promise<void>((r) => (release = r));
    // Alone in line: no wait (an update of a quiet object pays one map lookup).
    if (l.holders > 1) await before;
    let ended = false;
    return new KeyTurn(l.stored, (stored) => {
      if (ended) return;
      ended = true;
      l.stored = stored;
      if (--l.holders === 0) this.lines.delete(key);
      release();
    });
  }

  /** Keys with updates in line (for tests). */
  get size(): number {
    return this.lines.size;
  }
}
