// Supervision: exits are restarted with a doubling back-off up to its cap,
// the reason is the exit code with the log's last line, and stop() or
// endSupervision() ends it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Proc } from './process';
import { SupervisedProc, type Restart } from './supervisor';

/** A Proc around `node -e script` whose log file holds one JSON line. */
function nodeProc(script: string, logFile: string): Proc {
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    name: 'demo',
    child,
    pid: child.pid!,
    logFile,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

describe('shared/cluster: supervision', function () {
  this.timeout(30_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-supervisor-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('restarts an exiting process with a doubling, capped back-off and says why', async () => {
    const log = join(dir, 'demo.log');
    writeFileSync(log, '{"level":50,"msg":"leaderelection lost"}\n');
    const restarts: Restart[] = [];
    const pids = new Set<number>();
    let launches = 0;
    const s = new SupervisedProc(
      () => {
        launches++;
        const p = nodeProc('process.exit(3)', log);
        pids.add(p.pid);
        return p;
      },
      { onRestart: (r) => restarts.push(r), backoff: { initialMs: 20, maxMs: 80, resetAfterMs: 60_000 } },
    );
    while (restarts.length < 5) await new Promise((r) => setTimeout(r, 20));
    await s.stop();
    const after = launches;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(launches, after, 'no start after stop()');
    assert.deepEqual(
      restarts.slice(0, 5).map((r) => r.delayMs),
      [20, 40, 80, 80, 80],
    );
    assert.equal(restarts[0].why, 'exit code 3: leaderelection lost');
    assert.deepEqual(
      restarts.slice(0, 5).map((r) => r.count),
      [1, 2, 3, 4, 5],
    );
    assert.ok(pids.size >= 5, 'every run is a new process');
  });

  it('reports a signal, and a stop() during the wait starts nothing', async () => {
    const log = join(dir, 'none.log');
    const restarts: Restart[] = [];
    let launches = 0;
    const s = new SupervisedProc(
      () => {
        launches++;
        return nodeProc('setInterval(() => {}, 1000)', log);
      },
      { onRestart: (r) => restarts.push(r), backoff: { initialMs: 500, maxMs: 500, resetAfterMs: 60_000 } },
    );
    process.kill(s.pid, 'SIGKILL');
    while (!restarts.length) await new Promise((r) => setTimeout(r, 20));
    assert.equal(restarts[0].why, 'signal SIGKILL');
    await s.stop();
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(launches, 1);
  });

  it('restarts nothing that exits after endSupervision(), before any signal of its own', async () => {
    const restarts: Restart[] = [];
    let launches = 0;
    const s = new SupervisedProc(
      () => {
        launches++;
        return nodeProc('setInterval(() => {}, 1000)', join(dir, 'ended.log'));
      },
      { onRestart: (r) => restarts.push(r), backoff: { initialMs: 20, maxMs: 20, resetAfterMs: 60_000 } },
    );
    // A launcher that is stopping ends the supervision first; the exit (a terminal's SIGINT
    // reaching the child too) then comes on its own.
    s.endSupervision();
    process.kill(s.pid, 'SIGINT');
    await s.exited;
    // The supervisor's own reaction to the exit ran before this (it subscribed first).
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(restarts, []);
    assert.equal(launches, 1);
  });

  it('starts again from the first delay after a run that lasted the reset period', async () => {
    const restarts: Restart[] = [];
    const s = new SupervisedProc(
      () => nodeProc('setTimeout(() => process.exit(1), 150)', join(dir, 'x.log')),
      {
        onRestart: (r) => restarts.push(r),
        backoff: { initialMs: 20, maxMs: 80, resetAfterMs: 100 },
      },
    );
    while (restarts.length < 3) await new Promise((r) => setTimeout(r, 20));
    await s.stop();
    // Every run outlived the reset period: no doubling.
    assert.deepEqual(
      restarts.slice(0, 3).map((r) => r.delayMs),
      [20, 20, 20],
    );
  });
});
