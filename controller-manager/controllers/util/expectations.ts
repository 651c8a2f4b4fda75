// client-go's ControllerExpectations: a controller records how many creates and
// deletes it has issued for a key, the informer handlers count them down as the
// objects show up (or vanish), and the controller does not act on the key again
// until they are all observed (or 5 minutes passed), so it never creates twice
// while its own creates are still in flight.

/** ExpectationsTimeout. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  timestamp: number;
}

export class ControllerExpectations {
  private readonly store = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when the controller may sync key: nothing outstanding, or the record expired. */
  satisfied(key: string): boolean {
    const e = this.store.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return this.now() - e.timestamp > EXPECTATIONS_TIMEOUT_MS;
  }

  get(key: string): { add: number; del: number } | undefined {
    const e = this.store.get(key);
    return e ? { add: e.add, del: e.del } : undefined;
  }

  set(key: string, add: number, del: number): void {
    this.store.set(key, { add, del, timestamp: this.now() });
  }

  expectCreations(key: string, n: number): void {
    this.set(key, n, 0);
  }

  expectDeletions(key: string, n: number): void {
    this.set(key, 0, n);
  }

  raise(key: string, add: number, del: number): void {
    const e = this.store.get(key);
    if (!e) return;
    e.add += add;
    e.del += del;
  }

  lower(key: string, add: number, del: number): void {
    const e = this.store.get(key);
    if (!e) return;
    e.add -= add;
    e.del -= del;
  }

  creationObserved(key: string): void {
    this.lower(key, 1, 0);
  }

  deletionObserved(key: string): void {
    this.lower(key, 0, 1);
  }

  delete(key: string): void {
    this.store.delete(key);
  }
}

/**
 * UIDTrackingControllerExpectations: deletions are tracked by the deleted
 * objects' keys, so a delete seen twice (update with deletionTimestamp, then
 * the delete itself) is counted once.
 */
export class UIDTrackingExpectations extends ControllerExpectations {
  private readonly uids = new Map<string, Set<string>>();

  /** Expects the deletion of these objects (and `adds` creations). */
  expectDeletionsOf(key: string, deletedKeys: string[], adds = 0): void {
    const set = new Set(deletedKeys);
    this.uids.set(key, set);
    this.set(key, adds, set.size);
  }

  /** Counts the deletion of deletedKey once, if it was expected. */
  deletionObservedOf(key: string, deletedKey: string): void {
    const set = this.uids.get(key);
    if (set?.delete(deletedKey)) this.deletionObserved(key);
  }

  override delete(key: string): void {
    super.delete(key);
    this.uids.delete(key);
  }
}
