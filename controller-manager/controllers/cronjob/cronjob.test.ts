import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { cronJobController, jobName, SCHEDULED_TIMESTAMP_ANNOTATION } from './cronjob';
import { formatInZone, parseSchedule } from './cron';

const at = (s: string) => Date.parse(s);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('controllers/cronjob: schedules', () => {
  it('parses the standard fields, names, steps and descriptors', () => {
    const next = (spec: string, from: string) => iso(parseSchedule(spec, 'UTC').next(at(from)));
    assert.equal(next('*/15 * * * *', '2025-03-10T10:07:30Z'), '2025-03-10T10:15:00.000Z');
    assert.equal(next('*/15 * * * *', '2025-03-10T10:15:00Z'), '2025-03-10T10:30:00.000Z');
    assert.equal(next('0 9 * * 1-5', '2025-03-07T09:00:00Z'), '2025-03-10T09:00:00.000Z'); // Friday -> Monday
    assert.equal(next('30 2 1 jan-mar *', '2025-03-02T00:00:00Z'), '2026-01-01T02:30:00.000Z');
    assert.equal(next('@hourly', '2025-03-10T10:07:00Z'), '2025-03-10T11:00:00.000Z');
    assert.equal(next('@daily', '2025-12-31T23:59:00Z'), '2026-01-01T00:00:00.000Z');
    assert.equal(next('@weekly', '2025-03-10T00:00:00Z'), '2025-03-16T00:00:00.000Z');
    assert.equal(next('@monthly', '2025-03-10T00:00:00Z'), '2025-04-01T00:00:00.000Z');
    assert.equal(next('@yearly', '2025-03-10T00:00:00Z'), '2026-01-01T00:00:00.000Z');
    // Day of month OR day of week when both are restricted.
    assert.equal(next('0 0 13 * 5', '2025-06-10T00:00:00Z'), '2025-06-13T00:00:00.000Z');
    assert.equal(next('0 0 13 * 5', '2025-06-13T00:00:00Z'), '2025-06-20T00:00:00.000Z');
    assert.equal(next('0 0 29 2 *', '2025-03-01T00:00:00Z'), '2028-02-29T00:00:00.000Z');
    assert.equal(next('0 0 31 2 *', '2025-03-01T00:00:00Z'), undefined);
    assert.equal(next('@every 90s', '2025-03-10T10:00:00Z'), '2025-03-10T10:01:30.000Z');
    assert.throws(() => parseSchedule('61 * * * *'), /end of range \(61\) above maximum \(59\)/);
    assert.throws(() => parseSchedule('* * * *'), /expected exactly 5 fields, found 4/);
    assert.throws(() => parseSchedule('@fortnightly'), /unrecognized descriptor/);
  });

  it('honours time zones (CRON_TZ, TZ and the default zone) across DST', () => {
    const ny = parseSchedule('CRON_TZ=America/New_York 0 9 * * *');
    assert.equal(iso(ny.next(at('2025-01-15T00:00:00Z'))), '2025-01-15T14:00:00.000Z');
    assert.equal(iso(ny.next(at('2025-07-15T00:00:00Z'))), '2025-07-15T13:00:00.000Z');
    const tokyo = parseSchedule('0 9 * * *', 'Asia/Tokyo');
    assert.equal(iso(tokyo.next(at('2025-01-15T00:00:00Z'))), '2025-01-16T00:00:00.000Z');
    assert.equal(formatInZone(at('2025-01-15T14:00:00Z'), 'America/New_York'), '2025-01-15T09:00:00-05:00');
    assert.throws(() => parseSchedule('TZ=Mars/Base 0 9 * * *'), /provided bad location Mars\/Base/);
  });
});

describe('controllers/cronjob', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    await env.run(cronJobController);
  });
  after(async () => env?.stop());
  // Each test starts on real time.
  beforeEach(() => {
    env.clock.offsetMs = 0;
  });

  const cronjobs = () => env.client.resource('cronjobs.batch').namespace('default');
  const jobs = () => env.client.resource('jobs.batch').namespace('default');
  const jobsOf = async (cj: string) =>
    (await jobs().list()).items.filter(
      (j) => j.metadata.ownerReferences?.[0]?.name === cj && !j.metadata.deletionTimestamp,
    );
  const cronjob = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
    metadata: { name },
    spec: {
      schedule: '*/5 * * * *',
      timeZone: undefined,
      jobTemplate: {
        metadata: { labels: { from: name } },
        spec: {
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
      ...spec,
    },
  });
  /** Moves the controller's clock to `ms` and makes it look at the CronJob. */
  const tick = async (name: string, ms: number) => {
    env.clock.set(ms);
    await cronjobs().patch(name, { metadata: { annotations: { tick: String(ms) } } }, 'merge');
  };
  const finishJob = async (name: string, type: 'Complete' | 'Failed', ms: number) => {
    const t = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const conditions =
      type === 'Complete'
        ? [
            { type: 'SuccessCriteriaMet', status: 'True', lastProbeTime: t, lastTransitionTime: t },
            { type: 'Complete', status: 'True', lastProbeTime: t, lastTransitionTime: t },
          ]
        : [
            {
              type: 'FailureTarget',
              status: 'True',
              reason: 'BackoffLimitExceeded',
              message: 'x',
              lastProbeTime: t,
              lastTransitionTime: t,
            },
            {
              type: 'Failed',
              status: 'True',
              reason: 'BackoffLimitExceeded',
              message: 'x',
              lastProbeTime: t,
              lastTransitionTime: t,
            },
          ];
    await jobs().patch(
      name,
      {
        status: {
          startTime: t,
          ...(type === 'Complete' ? { completionTime: t, succeeded: 1 } : { failed: 1 }),
          conditions,
        },
      },
      'merge',
      { subresource: 'status' },
    );
  };
  const fiveMinutesAfter = (created: string) => Math.floor(Date.parse(created) / 300_000) * 300_000 + 300_000;

  it('creates the job of each scheduled time; Forbid skips while one runs', async () => {
    const cj = await cronjobs().create(cronjob('tick', { concurrencyPolicy: 'Forbid', timeZone: undefined }));
    const t1 = fiveMinutesAfter(cj.metadata.creationTimestamp!);
    await tick('tick', t1 - 10_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await jobsOf('tick')).length, 0, 'nothing before the first scheduled time');
    await tick('tick', t1 + 2_000);
    const [job] = await waitFor('first job', async () => {
      const js = await jobsOf('tick');
      return js.length === 1 ? js : undefined;
    });
    assert.equal(job.metadata.name, `tick-${t1 / 60_000}`);
    assert.equal(job.metadata.name, jobName(cj, t1));
    assert.equal(job.metadata.labels!.from, 'tick');
    assert.equal(job.metadata.annotations![SCHEDULED_TIMESTAMP_ANNOTATION], formatInZone(t1, 'UTC'));
    assert.deepEqual(job.metadata.ownerReferences, [
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        name: 'tick',
        uid: cj.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const st = await waitFor('status', async () => {
      const s = (await cronjobs().get('tick')).status;
      return s?.active?.length === 1 ? s : undefined;
    });
    assert.equal(st.active[0].name, job.metadata.name);
    assert.equal(st.lastScheduleTime, new Date(t1).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    await env.expectEvent('tick', 'SuccessfulCreate', (n) => n === `Created job ${job.metadata.name}`);

    // Next time, the first still runs: Forbid.
    await tick('tick', t1 + 300_000 + 2_000);
    await waitFor('JobAlreadyActive', () => env.eventsFor('tick', 'JobAlreadyActive').length > 0);
    assert.equal((await jobsOf('tick')).length, 1);

    // It completes: lastSuccessfulTime is set, and the time skipped under Forbid (still
    // the most recent unmet one) runs now.
    await finishJob(job.metadata.name!, 'Complete', t1 + 310_000);
    const second = `tick-${(t1 + 300_000) / 60_000}`;
    const done = await waitFor('completed seen, skipped time run', async () => {
      const s = (await cronjobs().get('tick')).status;
      return s?.lastSuccessfulTime && s.active?.length === 1 && s.active[0].name === second ? s : undefined;
    });
    assert.equal(done.lastSuccessfulTime, new Date(t1 + 310_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    assert.equal(done.lastScheduleTime, new Date(t1 + 300_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    await env.expectEvent(
      'tick',
      'SawCompletedJob',
      (n) => n === `Saw completed job: ${job.metadata.name}, status: Complete`,
    );
    assert.deepEqual(
      (await jobsOf('tick')).map((j) => j.metadata.name).sort(),
      [job.metadata.name, second].sort(),
    );
  });

  it('Replace deletes the running job; history limits remove old finished jobs', async () => {
    const cj = await cronjobs().create(
      cronjob('rep', {
        concurrencyPolicy: 'Replace',
        successfulJobsHistoryLimit: 1,
        failedJobsHistoryLimit: 0,
      }),
    );
    const t1 = fiveMinutesAfter(cj.metadata.creationTimestamp!);
    await tick('rep', t1 + 1_000);
    await waitFor('job 1', async () => (await jobsOf('rep')).length === 1);
    // Job 1 is the active run once the status says so (a status write that lost a race with the
    // tick is retried, adopting the job it created); only then is the next time due.
    await waitFor('job 1 active', async () => (await cronjobs().get('rep')).status?.active?.length === 1);
    await tick('rep', t1 + 300_000 + 1_000);
    const second = `rep-${(t1 + 300_000) / 60_000}`;
    await waitFor('replaced', async () => {
      const js = await jobsOf('rep');
      return js.length === 1 && js[0].metadata.name === second;
    });
    await env.expectEvent('rep', 'SuccessfulDelete', (n) => n === `Deleted job rep-${t1 / 60_000}`);
    // Two complete jobs: only the newest is kept.
    await finishJob(second, 'Complete', t1 + 301_000);
    await tick('rep', t1 + 600_000 + 1_000);
    const third = `rep-${(t1 + 600_000) / 60_000}`;
    await waitFor('third', async () => (await jobsOf('rep')).some((j) => j.metadata.name === third));
    await finishJob(third, 'Complete', t1 + 601_000);
    await waitFor('history limit', async () => {
      const js = await jobsOf('rep');
      return js.length === 1 && js[0].metadata.name === third;
    });
    // A failed job with failedJobsHistoryLimit 0 goes at once.
    await tick('rep', t1 + 900_000 + 1_000);
    const fourth = `rep-${(t1 + 900_000) / 60_000}`;
    await waitFor('fourth', async () => (await jobsOf('rep')).some((j) => j.metadata.name === fourth));
    await finishJob(fourth, 'Failed', t1 + 901_000);
    await waitFor(
      'failed job removed',
      async () => !(await jobsOf('rep')).some((j) => j.metadata.name === fourth),
    );
  });

  it('startingDeadlineSeconds: a time missed by more than the deadline is skipped; suspend stops it', async () => {
    const cj = await cronjobs().create(cronjob('late', { startingDeadlineSeconds: 10 }));
    const t1 = fiveMinutesAfter(cj.metadata.creationTimestamp!);
    await tick('late', t1 + 60_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await jobsOf('late')).length, 0);
    // Within the deadline of the next time it runs.
    await tick('late', t1 + 300_000 + 5_000);
    await waitFor('job within deadline', async () => (await jobsOf('late')).length === 1);
    await cronjobs().patch('late', { spec: { suspend: true } }, 'merge');
    // The clock moves only once the controller's cache holds the suspension: a sync still queued
    // from the job's creation must not see the next time with the CronJob not yet suspended.
    const cache = env.factory.forResource('cronjobs.batch').lister().namespace('default');
    await waitFor('suspend in the cache', async () => cache.get('late')?.spec?.suspend === true);
    await tick('late', t1 + 600_000 + 5_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await jobsOf('late')).length, 1, 'suspended');
  });
});
