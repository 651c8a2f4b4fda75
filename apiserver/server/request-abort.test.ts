import assert from 'node:assert/strict';
import { RequestAbort } from './request-abort';

describe('RequestAbort', () => {
  it('aborts a signal taken before the abort', () => {
    const a = new RequestAbort();
    const signal = a.signal;
    assert.equal(signal.aborted, false);
    a.abort('gone');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'gone');
  });

  it('hands out an aborted signal after the abort, with the first reason', () => {
    const a = new RequestAbort();
    a.abort('timeout');
    a.abort('gone');
    assert.equal(a.signal.aborted, true);
    assert.equal(a.signal.reason, 'timeout');
    assert.equal(a.signal, a.signal);
  });
});
