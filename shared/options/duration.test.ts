import assert from 'node:assert/strict';
import { Command } from 'commander';
import { formatDuration, parseDuration } from './duration';
import { addFlags, readFlags } from './flags';
import { commonFlags } from './common';

describe('Go durations', () => {
  it('parses the forms Kubernetes flags use', () => {
    assert.equal(parseDuration('1m0s'), 60_000);
    assert.equal(parseDuration('5m'), 300_000);
    assert.equal(parseDuration('1h0m0s'), 3_600_000);
    assert.equal(parseDuration('300ms'), 300);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('8760h0m0s'), 8760 * 3_600_000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('-2s'), -2000);
  });
  it('rejects garbage', () => {
    for (const bad of ['', '5', 'm', '1x', '1m 2s', 'abc'])
      assert.throws(() => parseDuration(bad), /invalid duration/);
  });
  it('formats like Go', () => {
    assert.equal(formatDuration(60_000), '1m0s');
    assert.equal(formatDuration(3_600_000), '1h0m0s');
    assert.equal(formatDuration(2000), '2s');
    assert.equal(formatDuration(1500), '1.5s');
    assert.equal(formatDuration(300), '300ms');
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(8760 * 3_600_000), '8760h0m0s');
  });
});

describe('flag parsing', () => {
  it("takes klog's -v=2 as well as -v 2 and --v=2", () => {
    for (const argv of [['-v=2'], ['-v', '2'], ['--v=2']]) {
      const cmd = addFlags(new Command().exitOverride(), commonFlags);
      cmd.parse(argv, { from: 'user' });
      assert.equal(readFlags(cmd, commonFlags).values.v, 2, argv.join(' '));
    }
  });
});
