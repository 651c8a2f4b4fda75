// Auditing end to end: a policy file, events in the log file for every stage
// at every level, the legacy format, the webhook backend (EventList batches
// over HTTPS), log rotation with compression, truncation and the policy rules.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createCA } from '../../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { parseRequestInfo } from '../../endpoints/request-info';
import { localHTTPS, type LocalHTTPS } from '../admission/test-support';
import { evaluatePolicy, validatePolicy } from './policy';
import { TruncatingBackend, type Backend } from './backends';
import { legacyLine, RotatingFile } from './log-backend';
import type { AuditEvent } from './event';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: []
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
  omitManagedFields: true
- level: Request
  resources: [{group: "", resources: ["secrets"]}]
- level: Metadata
  omitStages: ["RequestReceived"]
  resources: [{group: "", resources: ["pods/status", "services"]}]
- level: Metadata
`;

function readEvents(file: string): AuditEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function waitFor<T>(fn: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('audit policy rules', () => {
  const policy = validatePolicy({
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    rules: [
      { level: 'None', users: ['system:kube-proxy'], verbs: ['watch'] },
      {
        level: 'RequestResponse',
        resources: [{ group: '', resources: ['pods/log', '*/scale'], resourceNames: ['web'] }],
      },
      { level: 'Request', namespaces: ['kube-system'] },
      { level: 'Metadata', userGroups: ['system:nodes'] },
      { level: 'None', nonResourceURLs: ['/api*'] },
    ],
  });
  const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
  const admin = { name: 'admin', groups: ['system:masters'] };

  it('matches users, verbs, resources with subresources and names, namespaces, groups and URLs', () => {
    const w = parseRequestInfo('GET', '/api/v1/pods', new URLSearchParams('watch=true'));
    assert.equal(evaluatePolicy(policy, { name: 'system:kube-proxy', groups: [] }, w).level, 'None');
    assert.equal(
      evaluatePolicy(policy, admin, info('GET', '/api/v1/namespaces/a/pods/web/log')).level,
      'RequestResponse',
    );
    assert.equal(
      evaluatePolicy(policy, admin, info('GET', '/api/v1/namespaces/a/pods/db/log')).level,
      'None',
    );
    assert.equal(
      evaluatePolicy(policy, admin, info('PUT', '/apis/apps/v1/namespaces/a/deployments/web/scale')).level,
      'None',
    );
    assert.equal(
      evaluatePolicy(policy, admin, info('GET', '/api/v1/namespaces/a/replicationcontrollers/web/scale'))
        .level,
      'RequestResponse',
    );
    assert.equal(
      evaluatePolicy(policy, admin, info('GET', '/api/v1/namespaces/kube-system/pods')).level,
      'Request',
    );
    assert.equal(
      evaluatePolicy(policy, { name: 'n', groups: ['system:nodes'] }, info('GET', '/version')).level,
      'Metadata',
    );
    assert.equal(evaluatePolicy(policy, admin, info('GET', '/apis')).level, 'None');
    assert.equal(evaluatePolicy(policy, admin, info('GET', '/version')).level, 'None');
  });

  it('refuses invalid policies', () => {
    assert.throws(
      () => validatePolicy({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Loud' }] }),
      /rules\[0\]\.level: Unsupported value: "Loud"/,
    );
    assert.throws(() => validatePolicy({ apiVersion: 'v1', kind: 'ConfigMap' }), /kind must be "Policy"/);
  });
});

describe('audit log backend', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let dir: string;
  let logFile: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-audit-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    logFile = join(dir, 'audit.log');
    srv = await startTestAPIServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: logFile });
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const eventsOf = (id: string) => readEvents(logFile).filter((e) => e.auditID === id);

  it('writes RequestReceived and ResponseComplete at Metadata level, with the Audit-Id header', async () => {
    const r = await api('GET', '/api/v1/namespaces/default/pods?limit=5', {
      headers: { 'user-agent': 'audit-test/1.0' },
    });
    assert.equal(r.status, 200);
    const id = String(r.headers['audit-id']);
    assert.match(id, /^[0-9a-f-]{36}$/);
    const evs = await waitFor(() => (eventsOf(id).length === 2 ? eventsOf(id) : undefined));
    assert.deepEqual(
      evs.map((e) => e.stage),
      ['RequestReceived', 'ResponseComplete'],
    );
    const done = evs[1];
    assert.equal(done.kind, 'Event');
    assert.equal(done.apiVersion, 'audit.k8s.io/v1');
    assert.equal(done.level, 'Metadata');
    assert.equal(done.verb, 'list');
    assert.equal(done.requestURI, '/api/v1/namespaces/default/pods?limit=5');
    assert.equal(done.user.username, 'kubernetes-admin');
    assert.deepEqual(done.user.groups, ['system:masters', 'system:authenticated']);
    assert.deepEqual(done.sourceIPs, ['127.0.0.1']);
    assert.equal(done.userAgent, 'audit-test/1.0');
    assert.deepEqual(done.objectRef, { resource: 'pods', namespace: 'default', apiVersion: 'v1' });
    assert.deepEqual(done.responseStatus, { metadata: {}, code: 200 });
    assert.match(done.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(done.stageTimestamp >= done.requestReceivedTimestamp);
    assert.equal(done.annotations?.['authorization.k8s.io/decision'], 'allow');
    assert.equal(done.requestObject, undefined);
    assert.equal(done.responseObject, undefined);
  });

  it('logs the request object at Request level and both objects at RequestResponse level', async () => {
    const s = await api('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'audited' }, stringData: { k: 'v' } },
    });
    const sev = await waitFor(() => eventsOf(String(s.headers['audit-id']))[1]);
    assert.equal(sev.level, 'Request');
    assert.deepEqual((sev.requestObject as any).metadata, { name: 'audited' });
    assert.equal(sev.responseObject, undefined);
    assert.equal(sev.objectRef?.name, 'audited');
    assert.deepEqual(sev.responseStatus, { metadata: {}, code: 201 });

    const c = await api('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-audit' }, data: { a: '1' } },
    });
    const cev = await waitFor(() => eventsOf(String(c.headers['audit-id']))[1]);
    assert.equal(cev.level, 'RequestResponse');
    assert.deepEqual((cev.requestObject as any).data, { a: '1' });
    const resp = cev.responseObject as any;
    assert.equal(resp.metadata.name, 'cm-audit');
    assert.equal(resp.metadata.managedFields, undefined, 'omitManagedFields');
    assert.ok(resp.metadata.uid);
  });

  it('logs failures with the Status as responseStatus, and honours omitStages and level None', async () => {
    const r = await api('GET', '/api/v1/namespaces/default/services/nope');
    assert.equal(r.status, 404);
    const evs = await waitFor(() => {
      const e = eventsOf(String(r.headers['audit-id']));
      return e.length ? e : undefined;
    });
    assert.deepEqual(
      evs.map((e) => e.stage),
      ['ResponseComplete'],
    );
    assert.deepEqual(evs[0].responseStatus, {
      metadata: {},
      status: 'Failure',
      message: 'services "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'services' },
      code: 404,
    });
    const h = await api('GET', '/healthz');
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(eventsOf(String(h.headers['audit-id'] ?? 'none')).length, 0);
    assert.ok(!readFileSync(logFile, 'utf8').includes('"/healthz"'));
  });

  it('writes ResponseStarted for long-running requests', async () => {
    const controller = new AbortController();
    const p = api('GET', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1').catch(
      () => undefined,
    );
    const r = await p;
    controller.abort();
    const id = String(r?.headers['audit-id']);
    const evs = await waitFor(() => (eventsOf(id).length >= 3 ? eventsOf(id) : undefined));
    assert.deepEqual(
      evs.map((e) => e.stage),
      ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
    );
    assert.equal(evs[1].responseStatus?.code, 200);
  });
});

describe('audit legacy format, batch mode and webhook backend', function () {
  this.timeout(60_000);
  let dir: string;
  let hook: LocalHTTPS;
  const batches: any[] = [];
  let fail = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-audit-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    const ca = await createCA('audit-webhook-ca');
    hook = await localHTTPS(ca, async (body) => {
      if (fail > 0) {
        fail--;
        return { status: 500, body: {} };
      }
      batches.push(body);
      return { body: {} };
    });
    writeFileSync(
      join(dir, 'webhook.kubeconfig'),
      `apiVersion: v1
kind: Config
clusters:
- name: audit
  cluster:
    server: ${hook.url}/audit
    certificate-authority-data: ${hook.caBundle}
contexts:
- name: audit
  context: {cluster: audit, user: audit}
current-context: audit
users:
- name: audit
  user: {token: secret-token}
`,
    );
  });
  after(async () => {
    await hook.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('posts EventList batches to the webhook, retrying with backoff, and writes legacy lines in batch mode', async () => {
    fail = 1;
    const logFile = join(dir, 'legacy.log');
    const srv = await startTestAPIServer({
      auditPolicyFile: join(dir, 'policy.yaml'),
      auditLogPath: logFile,
      auditLogFormat: 'legacy',
      auditLogMode: 'batch',
      auditWebhookConfigFile: join(dir, 'webhook.kubeconfig'),
      auditWebhookBatchMaxWait: 200,
      auditWebhookInitialBackoff: 50,
    });
    const api = testRequester(srv.config);
    try {
      const r = await api('GET', '/api/v1/namespaces/default/configmaps', {
        headers: { 'user-agent': 'legacy/1' },
      });
      const id = String(r.headers['audit-id']);
      const items = await waitFor(() => {
        const all = batches.flatMap((b) => b.items).filter((e: any) => e.auditID === id);
        return all.length === 2 ? all : undefined;
      });
      assert.equal(batches[0].kind, 'EventList');
      assert.equal(batches[0].apiVersion, 'audit.k8s.io/v1');
      assert.deepEqual(
        items.map((e: any) => e.stage),
        ['RequestReceived', 'ResponseComplete'],
      );
      const line = await waitFor(() =>
        readFileSync(logFile, 'utf8')
          .split('\n')
          .find((l) => l.includes(id) && l.includes('ResponseComplete')),
      );
      assert.match(
        line,
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z AUDIT: id="${id}" stage="ResponseComplete" ip="127.0.0.1" method="list" user="kubernetes-admin" groups="\\\\"system:masters\\\\",\\\\"system:authenticated\\\\"" as="<self>" asgroups="<lookup>" user-agent="legacy/1" namespace="default" uri="/api/v1/namespaces/default/configmaps" response="200"$`,
        ),
      );
    } finally {
      await api.close();
      await srv.stop();
    }
  });

  it('formats impersonated users in legacy lines', () => {
    const ev = {
      requestReceivedTimestamp: '2026-01-01T00:00:00.000000Z',
      auditID: 'x',
      stage: 'RequestReceived',
      sourceIPs: [],
      verb: 'get',
      user: { username: 'a' },
      impersonatedUser: { username: 'b', groups: ['g'] },
      requestURI: '/x',
    } as unknown as AuditEvent;
    assert.equal(
      legacyLine(ev),
      '2026-01-01T00:00:00.000000Z AUDIT: id="x" stage="RequestReceived" ip="<unknown>" method="get" user="a" groups="<none>" as="b" asgroups="\\"g\\"" user-agent="" namespace="<none>" uri="/x" response="<deferred>"',
    );
  });

  it('truncates large events and drops what stays too large', () => {
    const got: AuditEvent[][] = [];
    const sink: Backend = { process: (e) => void got.push(e), shutdown: async () => {} };
    const t = new TruncatingBackend(sink, { maxEventSize: 400, maxBatchSize: 700 });
    const base = { auditID: 'a', stage: 'ResponseComplete', user: { username: 'u' }, sourceIPs: [] } as any;
    t.process([
      { ...base, requestObject: { big: 'x'.repeat(1000) } },
      { ...base, auditID: 'b' },
      { ...base, auditID: 'c', annotations: { huge: 'y'.repeat(1000) } },
    ]);
    const flat = got.flat();
    assert.deepEqual(
      flat.map((e) => e.auditID),
      ['a', 'b'],
    );
    assert.equal(flat[0].requestObject, undefined);
    assert.equal(flat[0].annotations?.['audit.k8s.io/truncated'], 'true');
  });

  it('rotates the log by size, compresses backups and keeps maxbackup of them', () => {
    const file = join(dir, 'rot', 'audit.log');
    let t = Date.parse('2026-01-01T00:00:00Z');
    const f = new RotatingFile(file, {
      maxSizeMB: 1,
      maxAgeDays: 0,
      maxBackups: 2,
      compress: true,
      now: () => new Date((t += 1000)),
    });
    const line = 'z'.repeat(1023) + '\n';
    for (let i = 0; i < 1024 * 4 + 10; i++) f.write(line);
    f.close();
    const names = readdirSync(join(dir, 'rot')).sort();
    assert.equal(names.length, 3, names.join(','));
    assert.ok(names.includes('audit.log'));
    const backups = names.filter((n) => n !== 'audit.log');
    for (const b of backups) assert.match(b, /^audit-2026-01-01T00-00-\d\d\.000\.log\.gz$/);
    const content = gunzipSync(readFileSync(join(dir, 'rot', backups[1]))).toString();
    assert.equal(content.length, 1024 * 1024);
  });
});
