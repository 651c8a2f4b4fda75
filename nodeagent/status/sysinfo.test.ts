// The machine's facts and readings against what the kernel says through other doors (node:os,
// statfs, /proc), so a parsing slip shows.
import assert from 'node:assert/strict';
import { readFileSync, statfsSync } from 'node:fs';
import { cpus, release, tmpdir } from 'node:os';
import { readFilesystem, readMachineInfo, SystemReader } from './sysinfo';

const memTotal = () =>
  Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;

describe('node agent: machine facts and readings', () => {
  before(function () {
    if (process.platform !== 'linux') this.skip();
  });

  it('reads cores, memory, kernel and boot ID as the kernel reports them', async () => {
    const m = await readMachineInfo();
    assert.equal(m.cores, cpus().length);
    assert.equal(m.memoryCapacity, memTotal());
    assert.equal(m.kernelVersion, release());
    assert.equal(m.bootID, readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    assert.match(m.systemUUID, /^[0-9A-Fa-f-]{36}$|^$/);
    assert.ok(m.osImage.length > 0);
  });

  it("finds a path's mount and sizes it as statfs does", async () => {
    const dir = tmpdir();
    const fs = await readFilesystem(dir);
    const s = statfsSync(dir);
    assert.equal(fs.capacity, s.blocks * s.bsize);
    assert.equal(fs.used, (s.blocks - s.bfree) * s.bsize);
    assert.ok(
      dir === fs.mountpoint || dir.startsWith(fs.mountpoint === '/' ? '/' : `${fs.mountpoint}/`),
      fs.mountpoint,
    );
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '));
    assert.ok(
      mounts.some(([dev, at]) => dev === fs.device && at === fs.mountpoint),
      JSON.stringify(fs),
    );
  });

  it('reads memory, pids and CPU time, with a CPU rate from the second reading on', async () => {
    const reader = new SystemReader(tmpdir());
    const now = Date.now();
    const first = await reader.read(now);
    assert.equal(first.time, now);
    assert.equal(first.memory.capacity, memTotal());
    assert.ok(first.memory.available > 0 && first.memory.available <= first.memory.capacity);
    assert.equal(first.memory.used, first.memory.capacity - first.memory.available);
    assert.ok(first.pids.running > 0 && first.pids.max >= first.pids.running);
    assert.ok(first.cpu.usageCoreNanoSeconds > 0);
    const second = await reader.read(now + 1000);
    assert.ok(second.cpu.usageCoreNanoSeconds >= first.cpu.usageCoreNanoSeconds);
    assert.ok(second.cpu.usageNanoCores >= 0);
  });
});
