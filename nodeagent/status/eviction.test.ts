import assert from 'node:assert/strict';
import { FakeClock } from '../../shared/client/clock';
import { DEFAULT_EVICTION_HARD } from '../app/options';
import {
  evictionReservation,
  formatThresholds,
  parseThresholds,
  PressureTracker,
  thresholdAmount,
  thresholdsMet,
  type Observations,
} from './eviction';

const Mi = 1024 * 1024;

describe('nodeagent/status: eviction thresholds', () => {
  it('parses the default --eviction-hard (absolute and percentage forms)', () => {
    const ts = parseThresholds(DEFAULT_EVICTION_HARD);
    assert.deepEqual(
      ts.map((t) => [t.signal, t.quantity, t.percentage]),
      [
        ['imagefs.available', undefined, 0.15],
        ['memory.available', BigInt(100 * Mi), undefined],
        ['nodefs.available', undefined, 0.1],
      ],
    );
    assert.equal(formatThresholds(ts), DEFAULT_EVICTION_HARD);
  });

  it('parses the map form of a KubeletConfiguration and pid.available', () => {
    const ts = parseThresholds({
      'memory.available': '1Gi',
      'pid.available': '5%',
      'nodefs.inodesFree': '1000',
    });
    assert.equal(ts.length, 3);
    assert.equal(ts[0].quantity, 1024n * BigInt(Mi));
    assert.equal(ts[1].percentage, 0.05);
    assert.equal(ts[2].quantity, 1000n);
  });

  it('drops zero thresholds and rejects bad ones with the kubelet messages', () => {
    assert.equal(parseThresholds('memory.available<0,nodefs.available<0%').length, 0);
    assert.throws(
      () => parseThresholds('memory.available>1Gi'),
      /invalid eviction threshold syntax memory.available>1Gi, expected <signal><operator><value>/,
    );
    assert.throws(() => parseThresholds('cpu.available<1'), /unsupported eviction signal cpu.available/);
    assert.throws(
      () => parseThresholds('memory.available<1Gi,memory.available<2Gi'),
      /found duplicate eviction threshold for signal memory.available/,
    );
    assert.throws(() => parseThresholds('nodefs.available<150%'), /must be >= 0% and <= 100%/);
    assert.throws(() => parseThresholds('memory.available<-1Gi'), /must be positive/);
    assert.throws(() => parseThresholds('memory.available<lots'), /invalid eviction threshold value lots/);
  });

  it('meets thresholds against observations and reserves allocatable like the kubelet', () => {
    const ts = parseThresholds(DEFAULT_EVICTION_HARD);
    const obs: Observations = {
      'memory.available': { available: 50 * Mi, capacity: 1000 * Mi },
      'nodefs.available': { available: 200, capacity: 1000 },
      'imagefs.available': { available: 100, capacity: 1000 },
    };
    assert.deepEqual(
      thresholdsMet(ts, obs).map((t) => t.signal),
      ['imagefs.available', 'memory.available'],
    );
    assert.equal(thresholdAmount(ts[2], 1000), 100);
    // 100Mi kept back from memory, 10% from ephemeral storage.
    assert.deepEqual(evictionReservation(ts, { memory: 4096 * Mi, ephemeralStorage: 10_000 }), {
      memory: 100 * Mi,
      ephemeralStorage: 1000,
    });
  });

  it('keeps a pressure condition for the transition period after the threshold stops being met', () => {
    const clock = new FakeClock();
    const p = new PressureTracker(
      parseThresholds('memory.available<100Mi,pid.available<10'),
      5 * 60_000,
      clock,
    );
    const low = { 'memory.available': { available: 10 * Mi, capacity: 1000 * Mi } };
    const fine = { 'memory.available': { available: 900 * Mi, capacity: 1000 * Mi } };
    p.observe(fine);
    assert.equal(p.underPressure('MemoryPressure'), false);
    p.observe(low);
    assert.equal(p.underPressure('MemoryPressure'), true);
    assert.equal(p.underPressure('DiskPressure'), false);
    clock.step(60_000);
    p.observe(fine);
    // Not met any more, but observed a minute ago: still under pressure.
    assert.equal(p.underPressure('MemoryPressure'), true);
    clock.step(4 * 60_000 - 1);
    p.observe(fine);
    assert.equal(p.underPressure('MemoryPressure'), true);
    clock.step(1);
    p.observe(fine);
    assert.equal(p.underPressure('MemoryPressure'), false);
    // Met again: at once.
    p.observe(low);
    assert.equal(p.underPressure('MemoryPressure'), true);
    p.observe({ 'pid.available': { available: 5, capacity: 32768 } });
    assert.equal(p.underPressure('PIDPressure'), true);
  });

  it('with a zero transition period follows the observations exactly', () => {
    const clock = new FakeClock();
    const p = new PressureTracker(parseThresholds('nodefs.available<10%'), 0, clock);
    p.observe({ 'nodefs.available': { available: 5, capacity: 100 } });
    assert.equal(p.underPressure('DiskPressure'), true);
    p.observe({ 'nodefs.available': { available: 50, capacity: 100 } });
    assert.equal(p.underPressure('DiskPressure'), false);
  });
});
