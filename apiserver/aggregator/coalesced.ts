// One run of a sync at a time: a request while one runs makes exactly one more
// run after it (the aggregator's controllers sync whole state, so requests
// that pile up during a run are one).
export class CoalescedRuns {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run()
      .catch(this.onError)
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.request();
        }
      });
  }
}
