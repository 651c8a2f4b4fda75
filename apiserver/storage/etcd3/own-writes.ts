// The revisions of this client's own acknowledged writes and the key each
// changed (one key per write: every write here is a single-key Txn). A watch
// that delivered everything up to L has delivered everything up to R when each
// revision in (L, R] is one of these writes to a key outside its prefix: nobody
// else wrote in between, so no event of its prefix can be on its way. This
// lets a resource nobody writes to prove its cache current while this
// apiserver writes elsewhere (its leases, other resources); a write by another
// client in between leaves a gap, and the proof fails as it must.
export class OwnWrites {
  private readonly keys = new Map<number, string>();

  constructor(private readonly capacity = 16_384) {}

  note(revision: number, key: string): void {
    this.keys.set(revision, key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.keys().next().value!);
  }

  /** True when every revision in (from, to] is a write of this client to a key not under prefix. */
  allOutside(prefix: string, from: number, to: number): boolean {
    if (to - from > this.capacity) return false;
    for (let r = from + 1; r <= to; r++) {
      const key = this.keys.get(r);
      if (key === undefined || key.startsWith(prefix)) return false;
    }
    return true;
  }
}
