// Feature gates switch server behaviour where tkube implements it.
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { startTestAPIServer, testRequester, withTestAPIServer, type TestAPIServer } from '../server/testing';

const cms = '/api/v1/namespaces/default/configmaps';

const withServer = (
  gates: Record<string, string>,
  fn: (api: ReturnType<typeof testRequester>, srv: TestAPIServer) => Promise<void>,
) => withTestAPIServer({ featureGates: gates }, fn);

describe('feature gates in the apiserver', function () {
  this.timeout(30_000);

  it('ServerSideFieldValidation on: Strict refuses unknown fields with 400, Warn warns and drops them', async () => {
    await withServer({ ServerSideFieldValidation: 'true' }, async (api) => {
      const body = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fv', bogus: 1 },
        data: { a: 'b' },
        extra: true,
      };
      const strict = await api('POST', `${cms}?fieldValidation=Strict`, { body });
      assert.equal(strict.status, 400);
      assert.match(
        strict.json.message,
        /strict decoding error: unknown field "extra", unknown field "metadata.bogus"|strict decoding error: unknown field "metadata.bogus", unknown field "extra"/,
      );
      const warn = await api('POST', `${cms}?fieldValidation=Warn`, { body });
      assert.equal(warn.status, 201);
      const w = String(warn.headers.warning);
      assert.match(w, /299 - "unknown field \\"extra\\""/);
      assert.equal(warn.json.extra, undefined);
      const dup = await api('POST', `${cms}?fieldValidation=Strict`, {
        body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","name":"d2"}}',
      });
      assert.equal(dup.status, 400);
      assert.match(dup.json.message, /duplicate field "metadata.name"/);
      const bad = await api('POST', `${cms}?fieldValidation=Sometimes`, { body });
      assert.equal(bad.status, 422);
    });
  });

  it('ServerSideFieldValidation off (the default): unknown fields are dropped without a word', async () => {
    await withServer({}, async (api) => {
      const r = await api('POST', `${cms}?fieldValidation=Strict`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nofv' }, extra: true },
      });
      assert.equal(r.status, 201);
      assert.equal(r.headers.warning, undefined);
      assert.equal(r.json.extra, undefined);
    });
  });

  it('APIListChunking and RemainingItemCount switch paging and the count', async () => {
    await withServer({ RemainingItemCount: 'false' }, async (api) => {
      for (let i = 0; i < 3; i++)
        await api('POST', cms, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } },
        });
      const page = await api('GET', `${cms}?limit=1`);
      assert.equal(page.json.items.length, 1);
      assert.ok(page.json.metadata.continue);
      assert.equal(page.json.metadata.remainingItemCount, undefined);
    });
    await withServer({ APIListChunking: 'false' }, async (api) => {
      for (let i = 0; i < 3; i++)
        await api('POST', cms, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } },
        });
      const all = await api('GET', `${cms}?limit=1`);
      assert.equal(all.json.items.length, 3);
      assert.equal(all.json.metadata.continue, '');
    });
  });

  it('APIResponseCompression gzips large responses for clients that accept it', async () => {
    await withServer({}, async (api) => {
      const big = 'x'.repeat(200 * 1024);
      await api('POST', cms, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { big } },
      });
      const gz = await api('GET', `${cms}/big`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(JSON.parse(gunzipSync(gz.body).toString()).data.big.length, big.length);
      const plain = await api('GET', `${cms}/big`);
      assert.equal(plain.headers['content-encoding'], undefined);
    });
    await withServer({ APIResponseCompression: 'false' }, async (api) => {
      await api('POST', cms, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'big' },
          data: { big: 'y'.repeat(200 * 1024) },
        },
      });
      const r = await api('GET', `${cms}/big`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(r.headers['content-encoding'], undefined);
    });
  });

  it('refuses unknown and locked gates at start', async () => {
    await assert.rejects(
      startTestAPIServer({ featureGates: { NoSuchGate: 'true' } }),
      /unrecognized feature gate: NoSuchGate/,
    );
    await assert.rejects(
      startTestAPIServer({ featureGates: { ServerSideApply: 'false' } }),
      /locked to true/,
    );
  });
});
