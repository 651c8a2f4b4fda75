// Coalesced reads of etcd's current revision for consistent reads from the
// watch cache: any number of callers share one linearizable read, but a caller
// never joins a read already on its way (etcd may have served that one before
// a write the caller saw acknowledged); it waits for the next, which starts
// when the one in flight ends. So each caller gets a revision at least as high
// as every write acknowledged before it called, at one read per round trip.
export class RevisionFence {
  private next: {
    promise: Promise<number>;
    resolve: (r: number) => void;
    reject: (e: unknown) => void;
  } | null = null;
  private inFlight = false;
  /** Linearizable reads sent so far (for tests and metrics). */
  reads = 0;

  constructor(private readonly read: () => Promise<number>) {}

  /** The store's revision, read after this call. */
  current(): Promise<number> {
    if (!this.next) {
      let resolve!: (r: number) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<number>((res, rej) => ((resolve = res), (reject = rej)));
      this.next = { promise, resolve, reject };
    }
    const p = this.next.promise;
    if (!this.inFlight) this.send();
    return p;
  }

  private send(): void {
    const batch = this.next;
    this.next = null;
    if (!batch) return;
    this.inFlight = true;
    this.reads++;
    this.read()
      .then(batch.resolve, batch.reject)
      .finally(() => {
        this.inFlight = false;
        this.send();
      });
  }
}
