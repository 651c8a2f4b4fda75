// The log writer as a process sees it: each script runs in a child node whose stderr is read back.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const MODULE = join(__dirname, 'index.js');

/** Runs `script` with `log` bound to this module; returns its stderr lines, parsed. */
function run(script: string): Record<string, unknown>[] {
  const r = spawnSync(
    process.execPath,
    ['-e', `const log = require(${JSON.stringify(MODULE)});\n${script}`],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('shared/log', () => {
  it("writes pino's line: level, time, pid, bound fields, call fields, msg last", () => {
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `const log = require(${JSON.stringify(MODULE)}); log.logger('c1').child({ node: 'n1' }).warn('héllo "x"', { n: 3 }); console.log(process.pid)`,
      ],
      { encoding: 'utf8' },
    );
    const line = r.stderr.trim();
    const o = JSON.parse(line);
    assert.deepEqual(Object.keys(o), ['level', 'time', 'pid', 'component', 'node', 'n', 'msg']);
    assert.equal(o.level, 40);
    assert.equal(o.pid, Number(r.stdout.trim()));
    assert.equal(o.msg, 'héllo "x"');
    assert.equal(o.component, 'c1');
    assert.equal(new Date(o.time).toISOString(), o.time);
  });

  it('maps info, warn and error to 30, 40 and 50, in order', () => {
    const lines = run(`const l = log.logger('c'); l.info('a'); l.warn('b'); l.error('c');`);
    assert.deepEqual(
      lines.map((o) => [o.level, o.msg]),
      [
        [30, 'a'],
        [40, 'b'],
        [50, 'c'],
      ],
    );
  });

  it('writes a V(n) message only when n <= the verbosity', () => {
    const lines = run(
      `const l = log.logger('c'); log.setVerbosity(2); l.v(2)?.info('two'); l.v(3)?.info('three'); l.v(0)?.info('zero');`,
    );
    assert.deepEqual(
      lines.map((o) => o.msg),
      ['two', 'zero'],
    );
  });

  it('writes nothing while silent', () => {
    const lines = run(
      `const l = log.logger('c'); log.setSilent(true); l.error('hidden'); log.setSilent(false); l.info('shown');`,
    );
    assert.deepEqual(
      lines.map((o) => o.msg),
      ['shown'],
    );
  });

  it('keeps the lines logged just before process.exit and from earlier turns', () => {
    const lines = run(
      `const l = log.logger('c'); l.info('first'); setTimeout(() => { for (let i = 0; i < 2000; i++) l.info('line ' + i); process.exit(0); }, 5);`,
    );
    assert.equal(lines.length, 2001);
    assert.equal(lines[0].msg, 'first');
    assert.equal(lines[2000].msg, 'line 1999');
  });

  it('serialises Errors, and survives cycles and BigInts', () => {
    const lines = run(
      `const l = log.logger('c'); const o = { a: 1 }; o.self = o; l.error('bad', { err: new TypeError('boom'), o, big: 10n });`,
    );
    assert.equal(lines.length, 1);
    const err = lines[0].err as Record<string, string>;
    assert.equal(err.type, 'TypeError');
    assert.equal(err.message, 'boom');
    assert.match(err.stack, /TypeError: boom/);
    assert.deepEqual(lines[0].o, { a: 1, self: '[Circular]' });
    assert.equal(lines[0].big, '10');
  });
});
