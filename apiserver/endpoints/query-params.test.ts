// Query parameters read with Kubernetes' (Go's) rules: option booleans as the
// query conversion takes them, int64 by strconv.ParseInt (overflow is a 400),
// timeout= by time.ParseDuration, pretty= by strconv.ParseBool.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('query parameters parsed with Go rules', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    const r = await api('POST', cms, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'q' } },
    });
    assert.equal(r.status, 201);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const events = (body: Buffer) =>
    body
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));

  it('takes watch=True (the Python client) and other non-false values as a watch', async () => {
    for (const w of ['True', 'TRUE', 't', '1', 'yes']) {
      const r = await api('GET', `${cms}?watch=${w}&timeoutSeconds=1`);
      assert.equal(r.status, 200, w);
      const evs = events(r.body);
      assert.ok(
        evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'q'),
        `${w}: ${r.body.toString().slice(0, 200)}`,
      );
    }
    for (const w of ['False', 'false', 'FALSE', '0']) {
      const r = await api('GET', `${cms}?watch=${w}`);
      assert.equal(r.status, 200, w);
      assert.equal(r.json.kind, 'ConfigMapList', w);
    }
  });

  it('answers int64 overflow and bad numbers with 400 and strconv text', async () => {
    const r = await api('GET', `${cms}?limit=99999999999999999999`);
    assert.equal(r.status, 400);
    assert.equal(
      r.body.toString().trimEnd(),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"strconv.ParseInt: parsing \\"99999999999999999999\\": value out of range","reason":"BadRequest","code":400}',
    );
    for (const p of [
      'limit=abc',
      'limit=1.5',
      'timeoutSeconds=99999999999999999999&watch=1',
      'timeoutSeconds=x&watch=true',
    ]) {
      const bad = await api('GET', `${cms}?${p}`);
      assert.equal(bad.status, 400, p);
      assert.match(
        bad.json.message,
        /^strconv\.ParseInt: parsing ".*": (invalid syntax|value out of range)$/,
        p,
      );
    }
    const del = await api('DELETE', `${cms}/q?gracePeriodSeconds=18446744073709551616`);
    assert.equal(del.status, 400);
    assert.equal(del.json.message, 'strconv.ParseInt: parsing "18446744073709551616": value out of range');
    assert.equal((await api('GET', `${cms}?limit=9223372036854775807`)).status, 200);
    // Zero or negative limits ask for no paging.
    assert.equal((await api('GET', `${cms}?limit=-5`)).json.items.length, 1);
  });

  it('reads timeout= as a Go duration and refuses a bad one with 400', async () => {
    assert.equal((await api('GET', `${cms}?timeout=1m30s`)).status, 200);
    assert.equal((await api('GET', `${cms}?timeout=0`)).status, 200);
    const bad = await api('GET', `${cms}?timeout=5`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.reason, 'BadRequest');
    assert.equal(
      bad.json.message,
      'invalid timeout specified in the request URL - time: missing unit in duration "5"',
    );
    assert.equal((await api('GET', `${cms}?timeout=abc`)).status, 400);
  });

  it('reads pretty= with strconv.ParseBool; bodies end as Go writes them', async () => {
    for (const p of ['T', '1']) {
      const body = (await api('GET', `${cms}/q?pretty=${p}`)).body.toString();
      assert.ok(body.includes('\n  "kind"'), p);
      assert.ok(body.endsWith('}'), 'MarshalIndent adds no newline');
    }
    for (const p of ['yes', 'False']) {
      const body = (await api('GET', `${cms}/q?pretty=${p}`)).body.toString();
      assert.ok(!body.includes('\n  "kind"'), p);
      assert.ok(body.endsWith('}\n'), "json.Encoder's newline");
    }
    assert.ok((await api('GET', cms)).body.toString().endsWith(']}\n'));
  });
});
