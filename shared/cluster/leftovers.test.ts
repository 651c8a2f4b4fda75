// A data dir's processes are found by the paths on their command lines: its
// component, its shim and the shim's child (a container's process) are found
// and killed; another data dir's component and a process that only names a
// file of it (someone's tail -f of a log) are left running.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killProcessesUnder, processesUnder, stillRunning } from './leftovers';
import { waitUntil } from './process';

describe('shared/cluster: leftovers of a data dir', function () {
  this.timeout(30_000);
  let base: string;
  const children: ChildProcess[] = [];

  before(() => (base = mkdtempSync(join(tmpdir(), 'tkube-leftovers-'))));
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });

  /** A stand-in for a component: node <dir>/cmd/agent.js --root-dir <dir>/nodes/n. */
  function component(dir: string): ChildProcess {
    mkdirSync(join(dir, 'cmd'), { recursive: true });
    writeFileSync(join(dir, 'cmd', 'agent.js'), 'setInterval(() => {}, 1000);');
    const c = spawn(process.execPath, [join(dir, 'cmd', 'agent.js'), '--root-dir', join(dir, 'nodes', 'n')], {
      stdio: 'ignore',
    });
    children.push(c);
    return c;
  }

  it('finds and kills its component, shim and container process, nothing of another data dir', async () => {
    const a = join(base, 'a');
    const b = join(base, 'a-other');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, 'x.log'), '');
    const mine = component(a);
    const theirs = component(b);
    // A shim (by its name) with -address under the data dir; its child stands for a container.
    const shim = spawn('/bin/sh', ['-c', 'sleep 1000 & wait', '-address', `unix://${a}/containerd.sock`], {
      argv0: 'containerd-shim-runc-v2',
      stdio: 'ignore',
    });
    children.push(shim);
    const tail = spawn('tail', ['-f', join(a, 'x.log')], { stdio: 'ignore' });
    children.push(tail);

    const found = await waitUntil(
      async () => {
        const ps = processesUnder(a);
        return ps.some((p) => p.kind === 'container') && ps.length >= 3 ? ps : undefined;
      },
      10_000,
      "the shim's child",
    );
    assert.deepEqual(
      found.map((p) => `${p.kind} ${p.pid}`).sort(),
      [
        `component ${mine.pid}`,
        `shim ${shim.pid}`,
        `container ${found.find((p) => p.kind === 'container')!.pid}`,
      ].sort(),
    );
    const container = found.find((p) => p.kind === 'container')!;
    assert.match(container.argv.join(' '), /^sleep 1000$/);

    const killed = await killProcessesUnder(a);
    assert.equal(killed.length, 3);
    for (const p of found) assert.equal(stillRunning(p), false, `${p.kind} ${p.pid} killed`);
    assert.deepEqual(processesUnder(a), []);
    // Another data dir's component runs on, and so does the tail of a log.
    assert.deepEqual(
      processesUnder(b).map((p) => p.pid),
      [theirs.pid],
    );
    const tailState = readFileSync(`/proc/${tail.pid}/stat`, 'utf8').split(') ')[1][0];
    assert.notEqual(tailState, 'Z', 'tail runs');
  });
});
