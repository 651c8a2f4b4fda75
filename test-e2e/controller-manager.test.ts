// The controller manager as a process against a real apiserver process:
// flags and --help, --controllers validation, the secure port (health,
// metrics, authorization), leader election between instances (takeover
// after SIGKILL, exit after losing the lease), and controllers at work.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Client, loadKubeconfig, type ClientConfig } from '../shared/client';
import {
  DIST,
  freePort,
  startAPIServerProcess,
  startProcess,
  tempDir,
  type APIServerProc,
  type Proc,
} from './support/processes';
import { waitUntil } from '../shared/cluster/process';

interface KCM extends Proc {
  name: string;
  port: number;
}

const LEASE = { duration: 3_000, renew: 2_000, retry: 500 };

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(DIST, 'cmd', 'controller-manager.js'), ...args],
      { timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as any).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

describe('controller-manager (processes)', function () {
  this.timeout(90_000);
  let api: APIServerProc;
  let dir: string;
  let cfg: ClientConfig;
  let client: Client;
  const kcms: KCM[] = [];
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  let admin: Agent;

  before(async () => {
    api = await startAPIServerProcess();
    dir = tempDir('kcm');
    cfg = loadKubeconfig(api.kubeconfig);
    client = Client.create(cfg, { qps: -1, http2: false });
    admin = new Agent({ connect: { rejectUnauthorized: false, cert: cfg.certPem, key: cfg.keyPem } });
  });

  after(async () => {
    for (const k of kcms) await k.stop('SIGKILL');
    await insecure.close();
    await admin?.close();
    await client?.close();
    await api?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startKCM(name: string, extra: string[] = []): Promise<KCM> {
    const port = await freePort();
    const p = startProcess(
      'controller-manager',
      [
        '--kubeconfig',
        api.kubeconfig,
        '--secure-port',
        String(port),
        '--bind-address',
        '127.0.0.1',
        '--cert-dir',
        join(dir, name),
        '--client-ca-file',
        join(api.dir, 'certs', 'ca.crt'),
        `--leader-elect-lease-duration=${LEASE.duration}ms`,
        `--leader-elect-renew-deadline=${LEASE.renew}ms`,
        `--leader-elect-retry-period=${LEASE.retry}ms`,
        '--controllers=serviceaccount,root-ca-cert-publisher',
        '-v=2',
        ...extra,
      ],
      dir,
    );
    const k: KCM = { ...p, name, port };
    kcms.push(k);
    await waitUntil(
      async () => (await get(k, '/healthz')).status === 200,
      20_000,
      `${name} to serve /healthz`,
    );
    return k;
  }

  async function get(
    k: KCM,
    path: string,
    agent: Agent = insecure,
  ): Promise<{ status: number; body: string }> {
    const r = await request(`https://127.0.0.1:${k.port}${path}`, {
      dispatcher: agent,
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    return { status: r.statusCode, body: await r.body.text() };
  }

  /** 1 when the process says it leads, 0 when not (leader_election_master_status). */
  async function leads(k: KCM): Promise<number | undefined> {
    const m = await get(k, '/metrics', admin);
    const line = /leader_election_master_status\{name="kube-controller-manager"\} (\d)/.exec(m.body);
    return line ? Number(line[1]) : undefined;
  }

  async function holder(): Promise<string> {
    const lease = await client
      .resource('leases.coordination.k8s.io')
      .namespace('kube-system')
      .get('kube-controller-manager');
    return lease.spec?.holderIdentity ?? '';
  }

  async function defaultSAIn(ns: string): Promise<void> {
    await client.resource('namespaces').create({ metadata: { name: ns } });
    await waitUntil(
      () => client.resource('serviceaccounts').namespace(ns).get('default'),
      15_000,
      `the default ServiceAccount in ${ns}`,
    );
  }

  it('shows every option with its default in --help', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    for (const want of [
      /--secure-port <value>.*\(default: 10257\)/,
      /--leader-elect \[bool\].*\(default: true\)/,
      /--leader-elect-lease-duration <value>.*\(default: 15s\)/,
      /--leader-elect-resource-lock <value>.*\(default: leases\)/,
      /--concurrent-gc-syncs <value>.*\(default: 20\)/,
      /--node-monitor-grace-period <value>.*\(default: 40s\)/,
      /--node-startup-grace-period <value>.*\(default: 1m0s\)/,
      /--terminated-pod-gc-threshold <value>.*\(default: 12500\)/,
      /--kube-api-qps <value>.*\(default: 20\)/,
      /--kube-api-content-type <value>.*\(default: application\/vnd.kubernetes.protobuf\)/,
      /--cluster-signing-duration <value>.*\(default: 8760h0m0s\)/,
      /--authorization-always-allow-paths <value>.*\(default: \[\/healthz,\/readyz,\/livez\]\)/,
      /Disabled-by-default controllers: bootstrapsigner, tokencleaner/,
      /--feature-gates <value>/,
    ])
      assert.match(r.stdout, want);
  });

  it('refuses controllers it does not know', async () => {
    const r = await run(['--kubeconfig', api.kubeconfig, '--secure-port=0', '--controllers=*,bogus']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"bogus" is not in the list of known controllers/);
  });

  it('elects one leader; the other takes over within the lease duration after SIGKILL; a stale leader exits', async () => {
    const a = await startKCM('a');
    await waitUntil(async () => (await leads(a)) === 1, 15_000, 'a to lead');
    const b = await startKCM('b');
    await new Promise((r) => setTimeout(r, LEASE.retry * 3));
    assert.equal(await leads(b), 0, 'b waits');
    assert.equal((await get(b, '/healthz')).status, 200, 'a waiting candidate is healthy');
    const verbose = await get(a, '/healthz?verbose');
    assert.match(verbose.body, /\[\+\]leaderElection ok/);
    await defaultSAIn('e2e-one');

    const leaderIdentity = await holder();
    const killedAt = Date.now();
    await a.stop('SIGKILL');
    await waitUntil(
      async () => (await holder()) !== leaderIdentity || undefined,
      10_000,
      'a new lease holder',
    );
    const takeover = Date.now() - killedAt;
    // client-go's rule: a candidate takes over once leaseDuration has passed since it last saw the
    // record change; it looks every retryPeriod (jittered up to 1.2x), so the bound is the lease
    // duration plus up to two retry periods (and this test's own polling).
    const bound = LEASE.duration + 2 * 1.2 * LEASE.retry + 1_000;
    assert.ok(takeover <= bound, `took over after ${takeover} ms (bound ${bound} ms)`);
    await waitUntil(async () => (await leads(b)) === 1, 5_000, 'b to lead');
    await defaultSAIn('e2e-two');

    // A leader frozen past its lease loses it to another candidate and, resumed, exits like kube-controller-manager.
    const c = await startKCM('c');
    process.kill(b.pid, 'SIGSTOP');
    try {
      await waitUntil(async () => (await leads(c)) === 1, 15_000, 'c to take over from the frozen b');
    } finally {
      process.kill(b.pid, 'SIGCONT');
    }
    const code = await Promise.race([
      b.exited,
      new Promise((r) => setTimeout(() => r('still running'), 10_000)),
    ]);
    assert.equal(code, 1, 'b exits after losing its lease');
    assert.match(readFileSync(b.logFile, 'utf8'), /leaderelection lost/);
    await defaultSAIn('e2e-three');
  });

  it('guards /metrics on the secure port and exposes workqueue and leader metrics', async () => {
    const k = kcms.find((x) => x.child.exitCode === null && x.child.signalCode === null)!;
    assert.equal((await get(k, '/metrics')).status, 403, 'anonymous');
    for (const p of ['/healthz', '/livez', '/readyz']) assert.equal((await get(k, p)).status, 200, p);
    const m = await get(k, '/metrics', admin);
    assert.equal(m.status, 200);
    assert.match(m.body, /workqueue_adds_total\{name="serviceaccount"\} \d+/);
    assert.match(m.body, /workqueue_depth\{name="root_ca_cert_publisher"\} \d+/);
    assert.match(m.body, /# TYPE workqueue_queue_duration_seconds histogram/);
    assert.match(
      m.body,
      /running_managed_controllers\{manager="kube-controller-manager",name="serviceaccount"\} 1/,
    );
    assert.match(m.body, /process_start_time_seconds/);
  });
});
