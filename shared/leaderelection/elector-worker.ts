// The worker thread of ThreadedLeaderElector (elector-thread.ts): a client, a Lease lock and a
// LeaderElector of its own; it tells the main thread what it observes and when it leads, and
// stops (releasing the lease when asked to) on the main thread's 'stop'.
import { parentPort, workerData } from 'node:worker_threads';
import { Client } from '../client/client';
import { setSilent, setVerbosity } from '../log';
import { LeaderElector } from './leaderelection';
import { LeaseLock } from './resourcelock';
import type { ElectorMessage, ElectorWorkerData } from './elector-thread';

const data = workerData as ElectorWorkerData;
const port = parentPort!;
const post = (m: ElectorMessage) => port.postMessage(m);
setVerbosity(data.verbosity);
setSilent(data.silent);

// JSON: a Lease is small, and the Protobuf codec would compile the API facts in this thread too.
const client = Client.create(data.config, { ...data.clientOptions, contentType: 'application/json' });
const lock = new LeaseLock(client, data.lock);
const stopped = new AbortController();
port.on('message', (m) => {
  if (m === 'stop') stopped.abort();
});

const elector = new LeaderElector({
  lock,
  name: data.lock.name,
  leaseDurationMs: data.leaseDurationMs,
  renewDeadlineMs: data.renewDeadlineMs,
  retryPeriodMs: data.retryPeriodMs,
  releaseOnCancel: data.releaseOnCancel,
  onObserved: (record, observedAt) => post({ type: 'observed', record, observedAt }),
  eventRecorder: {
    eventf: (regarding, _related, _type, reason, _action, note) =>
      post({ type: 'event', regarding, reason, note }),
  },
  callbacks: {
    onStartedLeading: (signal) => {
      post({ type: 'started' });
      return new Promise<void>((r) =>
        signal.addEventListener(
          'abort',
          () => {
            post({ type: 'stopped' });
            r();
          },
          { once: true },
        ),
      );
    },
  },
});

void elector
  .run(stopped.signal)
  .finally(() => client.close())
  .finally(() => {
    post({ type: 'done' });
    port.close();
  });
