import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FakeClock } from '../../shared/client/clock';
import {
  ContainerLogWriter,
  criTimestamp,
  readContainerLog,
  readLogTail,
  rfc3339Nano,
  rotatedFiles,
  type LogOptions,
} from './logs';

async function readAll(
  path: string,
  o: LogOptions,
  follow?: Parameters<typeof readContainerLog>[2],
): Promise<string> {
  let out = '';
  for await (const c of readContainerLog(path, o, follow)) out += c.toString('utf8');
  return out;
}

describe('nodeagent/pods: container logs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-logs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes CRI lines and reads them back (tail, timestamps, since, limitBytes)', async () => {
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 0, 0, 0));
    const path = join(dir, 'c', '0.log');
    const w = new ContainerLogWriter(path, { maxSizeBytes: 1 << 20, maxFiles: 5 }, clock);
    for (let i = 1; i <= 5; i++) {
      w.write('stdout', `line ${i}`);
      clock.step(1000);
    }
    const raw = readFileSync(path, 'utf8').split('\n');
    assert.match(raw[0], /^2025-01-01T00:00:00\.000000000Z stdout F line 1$/);
    assert.equal(await readAll(path, {}), 'line 1\nline 2\nline 3\nline 4\nline 5\n');
    assert.equal(await readAll(path, { tailLines: 2 }), 'line 4\nline 5\n');
    assert.equal(await readAll(path, { tailLines: 0 }), '');
    assert.equal(
      await readAll(path, { tailLines: 1, timestamps: true }),
      '2025-01-01T00:00:04.000000004Z line 5\n',
    );
    assert.equal(await readAll(path, { since: Date.UTC(2025, 0, 1, 0, 0, 3) }), 'line 4\nline 5\n');
    assert.equal(await readAll(path, { limitBytes: 10 }), 'line 1\nlin');
    assert.equal(await readAll(join(dir, 'missing.log'), {}), '');
  });

  it('adds no newline after a partial (P) line, for the reader and the log tail', async () => {
    // What containerd writes for `echo a; printf 'b'; printf 'c'` (the last output has no newline).
    const path = join(dir, '0.log');
    const ts = '2025-01-01T00:00:00.000000000Z';
    writeFileSync(path, `${ts} stdout F a\n${ts} stdout P b\n${ts} stdout P c\n`);
    assert.equal(await readAll(path, {}), 'a\nbc');
    assert.equal(readLogTail(path, 80, 2048), 'a\nbc');
    assert.equal(readLogTail(path, 2, 2048), 'bc', 'the last lines of the file');
    assert.equal(readLogTail(path, 80, 2), 'bc', 'the last bytes');
    writeFileSync(path, `${ts} stdout F a\n${ts} stderr F b\n`);
    assert.equal(readLogTail(path, 80, 2048), 'a\nb\n', 'full lines keep their newline');
  });

  it('formats timestamps like Go (RFC3339Nano trims trailing zeros)', () => {
    assert.equal(criTimestamp(Date.UTC(2025, 0, 1, 0, 0, 0, 120)), '2025-01-01T00:00:00.120000000Z');
    assert.equal(rfc3339Nano('2025-01-01T00:00:00.120000000Z'), '2025-01-01T00:00:00.12Z');
    assert.equal(rfc3339Nano('2025-01-01T00:00:00.000000000Z'), '2025-01-01T00:00:00Z');
  });

  it('rotates at the size limit and keeps at most maxFiles files, older ones compressed', () => {
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 0, 0, 0));
    const path = join(dir, '0.log');
    // Each line is ~50 bytes: a 120-byte file holds two.
    const w = new ContainerLogWriter(path, { maxSizeBytes: 120, maxFiles: 3 }, clock);
    for (let i = 0; i < 10; i++) {
      w.write('stdout', `message number ${i}`);
      clock.step(1000);
    }
    const rotated = rotatedFiles(path);
    assert.equal(rotated.length, 2, `rotated: ${rotated.join(', ')}`);
    assert.ok(rotated[0].endsWith('.gz'), 'the older rotated file is compressed');
    assert.ok(!rotated[1].endsWith('.gz'), 'the newest rotated file is not');
    assert.match(rotated[1], /0\.log\.20250101-0000\d\d$/);
    const current = readFileSync(path, 'utf8');
    assert.match(current, /message number 9/);
    assert.ok(current.length <= 120);
    assert.match(gunzipSync(readFileSync(rotated[0])).toString(), /message number/);
    assert.ok(existsSync(path));
  });

  it('follows new lines until the container stops, and across a rotation', async () => {
    const path = join(dir, '0.log');
    const w = new ContainerLogWriter(path, { maxSizeBytes: 100, maxFiles: 2 });
    w.write('stdout', 'first');
    let running = true;
    let polls = 0;
    const out = await readAll(
      path,
      { follow: true },
      {
        running: () => running,
        sleep: async () => {
          polls++;
          if (polls === 1) w.write('stdout', 'second');
          if (polls === 2) w.write('stderr', 'third line that forces a rotation of the file');
          if (polls === 3) {
            w.write('stdout', 'last');
            running = false;
          }
        },
      },
    );
    assert.equal(out, 'first\nsecond\nthird line that forces a rotation of the file\nlast\n');
  });

  it('stops following at limitBytes', async () => {
    const path = join(dir, '0.log');
    const w = new ContainerLogWriter(path, { maxSizeBytes: 1 << 20, maxFiles: 2 });
    w.write('stdout', 'abc');
    const out = await readAll(
      path,
      { follow: true, limitBytes: 6 },
      { running: () => true, sleep: async () => w.write('stdout', 'defgh') },
    );
    assert.equal(out, 'abc\nde');
  });
});
