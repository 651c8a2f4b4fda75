// How long the disk takes to make a small write durable while a row runs. A write is
// acknowledged once it is on disk (the embedded store syncs each commit, etcd its log),
// so a disk that stalls holds up every write in the meantime, and with it the watch
// events those writes make: one stall of 100 ms inside a 3 s watch row lifts its p99.
// The probe reports the slowest 4 KB write-and-fdatasync, so such a row says why.
import {
  close,
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  openSync,
  rmSync,
  write,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

const INTERVAL_MS = 100;
const BLOCK = Buffer.alloc(4096, 0x5a);

export class FsyncProbe {
  private readonly path: string;
  private readonly fd: number;
  private readonly timer: NodeJS.Timeout;
  /** When the probe's write under way started (undefined: none). */
  private started: number | undefined;
  private worst = 0;

  /** dir: a directory on the filesystem the stores write to. */
  constructor(dir: string) {
    this.path = join(dir, `.fsync-probe-${process.pid}`);
    this.fd = openSync(this.path, 'w');
    // Off the event loop (libuv's threads): the bench's own requests are not held up.
    this.timer = setInterval(() => {
      if (this.started !== undefined) return;
      const t0 = performance.now();
      this.started = t0;
      write(this.fd, BLOCK, 0, BLOCK.length, 0, () =>
        fdatasync(this.fd, () => {
          this.worst = Math.max(this.worst, performance.now() - t0);
          this.started = undefined;
        }),
      );
    }, INTERVAL_MS);
  }

  /** Stops probing: the slowest write-and-sync in ms (one still under way counts as far as it got). */
  stop(): number {
    clearInterval(this.timer);
    const pending = this.started === undefined ? 0 : performance.now() - this.started;
    const worstMs = Math.max(this.worst, pending);
    const finish = () => {
      close(this.fd, () => rmSync(this.path, { force: true }));
    };
    if (this.started === undefined) finish();
    else {
      // Closed once the write under way is done with the descriptor.
      const wait = setInterval(() => {
        if (this.started !== undefined) return;
        clearInterval(wait);
        finish();
      }, INTERVAL_MS);
    }
    return worstMs;
  }
}

/**
 * The disk's floors for one durable small write, `n` sequential runs of each in `dir`
 * (latencies in ms, sorted): `sync`, a 4 KB rewrite in place + fdatasync; `commit`, what
 * an embedded (LMDB) commit asks of the disk: a 4 KB page appended to the file (its size
 * grows, so the journal commits too) + fdatasync, then the 128-byte meta page written
 * through a descriptor opened O_DSYNC.
 */
export function fsyncFloor(dir: string, n = 200): { sync: Float64Array; commit: Float64Array } {
  const path = join(dir, `.fsync-floor-${process.pid}`);
  const fd = openSync(path, 'w');
  const meta = openSync(path, constants.O_WRONLY | constants.O_DSYNC);
  const sync = new Float64Array(n);
  const commit = new Float64Array(n);
  try {
    for (let i = 0; i < n; i++) {
      let t0 = performance.now();
      writeSync(fd, BLOCK, 0, BLOCK.length, 0);
      fdatasyncSync(fd);
      sync[i] = performance.now() - t0;
      t0 = performance.now();
      writeSync(fd, BLOCK, 0, BLOCK.length, (i + 1) * BLOCK.length);
      fdatasyncSync(fd);
      writeSync(meta, BLOCK, 0, 128, 0);
      commit[i] = performance.now() - t0;
    }
  } finally {
    closeSync(meta);
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return { sync: sync.sort(), commit: commit.sort() };
}
