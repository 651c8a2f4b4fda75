// The node agent's orderings are Go's byte order: no ICU collation, whose data a first
// localeCompare makes resident for the process's life (~3 MB of RSS in a bare node).
import assert from 'node:assert/strict';
import { statusChanged } from './node';
import { serviceEnvFor } from '../pods/env';

describe('nodeagent: orderings without ICU collation', () => {
  it('compares node conditions and orders service environment variables without localeCompare', () => {
    const original = String.prototype.localeCompare;
    let calls = 0;
    String.prototype.localeCompare = function (this: string, ...args: Parameters<string['localeCompare']>) {
      calls++;
      return original.apply(this, args);
    };
    try {
      const conditions = (ready: string) => [
        { type: 'Ready', status: ready, lastHeartbeatTime: 'a' },
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 'a' },
        { type: 'DiskPressure', status: 'False', lastHeartbeatTime: 'a' },
      ];
      assert.equal(
        statusChanged({ conditions: conditions('True') }, { conditions: conditions('True') }),
        false,
      );
      assert.equal(
        statusChanged({ conditions: conditions('True') }, { conditions: conditions('False') }),
        true,
      );
      const svc = (name: string) => ({
        metadata: { name, namespace: 'ns' },
        spec: { clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      });
      const env = serviceEnvFor([svc('web-b'), svc('web-a'), svc('db')], 'ns', true);
      assert.ok(env.get('WEB_A_SERVICE_HOST'));
    } finally {
      String.prototype.localeCompare = original;
    }
    assert.equal(calls, 0);
  });
});
