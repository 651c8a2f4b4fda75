// The ttl-after-finished controller: a finished Job with
// ttlSecondsAfterFinished is deleted (in the foreground) when its TTL runs
// out; unfinished Jobs and Jobs without a TTL stay.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { isNotFound, type Client, type KubeObject } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import { finishAndExpireTime } from './ttlafterfinished';

const NS = 'ttl-test';
const seconds = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('controller-manager: ttl-after-finished', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;
  const jobs = () => client.resource('jobs.batch').namespace(NS);

  async function job(name: string, ttl: number | undefined, finished: boolean): Promise<KubeObject> {
    const j = await jobs().create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: {
        ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }),
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    if (!finished) return j;
    const now = seconds(Date.now());
    return jobs().updateStatus({
      ...j,
      status: {
        startTime: now,
        completionTime: now,
        succeeded: 1,
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastProbeTime: now, lastTransitionTime: now },
          { type: 'Complete', status: 'True', lastProbeTime: now, lastTransitionTime: now },
        ],
      },
    });
  }

  before(async () => {
    srv = await startTestAPIServer();
    // The garbage collector finishes the foreground deletion the controller asks for.
    kcm = await startTestControllerManager(srv.kubeconfig, ['ttl-after-finished', 'garbagecollector']);
    client = kcm.client;
    await client.resource('namespaces').create({ metadata: { name: NS } });
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('deletes a finished Job when its TTL runs out, and leaves the others', async () => {
    const done = await job('done', 1, true);
    assert.deepEqual(
      finishAndExpireTime(done).map((t, i) => t - (i === 0 ? 0 : 1000)),
      [
        Date.parse(done.status.conditions[1].lastTransitionTime),
        Date.parse(done.status.conditions[1].lastTransitionTime),
      ],
    );
    await job('no-ttl', undefined, true);
    await job('running', 0, false);
    await waitUntil(
      async () => {
        try {
          const j = await jobs().get('done');
          return !!j.metadata.deletionTimestamp;
        } catch (err) {
          return isNotFound(err);
        }
      },
      15_000,
      'the expired Job to be deleted',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await jobs().get('no-ttl')).metadata.deletionTimestamp, undefined);
    assert.equal((await jobs().get('running')).metadata.deletionTimestamp, undefined);
  });
});
