// int64 fields past 2^53 (ControllerRevision.revision here) round-trip exactly, as
// through kube-apiserver's Go int64: JSON and Protobuf, in requests, storage,
// responses and watch events.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { Client, JSON_MEDIA_TYPE } from '../../shared/client';

const REVISION = '3546343826724306001';
const PATH = '/apis/apps/v1/namespaces/default/controllerrevisions';

for (const storage of ['application/json', 'application/vnd.kubernetes.protobuf']) {
  describe(`int64 beyond 2^53 end to end (storage ${storage})`, function () {
    this.timeout(30_000);
    let srv: TestAPIServer;
    let api: ReturnType<typeof testRequester>;
    let pb: Client;
    let json: Client;

    before(async () => {
      srv = await startTestAPIServer({ storageMediaType: storage });
      api = testRequester(srv.config);
      pb = Client.create(srv.config, { qps: -1 });
      json = Client.create(srv.config, { qps: -1, contentType: JSON_MEDIA_TYPE });
    });
    after(async () => {
      await api?.close();
      await pb?.close();
      await json?.close();
      await srv?.stop();
    });

    it('JSON text in, the same digits out of create, get, list and watch', async () => {
      const watch = await json.resource('controllerrevisions.apps').namespace('default').watch();
      const body = `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r1"},"data":{"a":1},"revision":${REVISION}}`;
      const created = await api('POST', PATH, { body });
      assert.equal(created.status, 201, created.body.toString());
      assert.match(created.body.toString(), new RegExp(`"revision":${REVISION}\\b`));
      assert.match((await api('GET', `${PATH}/r1`)).body.toString(), new RegExp(`"revision":${REVISION}\\b`));
      assert.match((await api('GET', PATH)).body.toString(), new RegExp(`"revision":${REVISION}\\b`));
      for await (const ev of watch) {
        assert.equal(ev.type, 'ADDED');
        assert.equal((ev.object as any).revision, BigInt(REVISION));
        break;
      }
      watch.stop();
    });

    it('patches (merge, strategic, JSON, apply) keep it and may set it', async () => {
      const exact = (n: string) => new RegExp(`"revision":${n}\\b`);
      const patch = async (type: string, body: string, query = '') => {
        const r = await api('PATCH', `${PATH}/r1${query}`, { body, contentType: type });
        assert.equal(r.status, 200, r.body.toString());
        return r.body.toString();
      };
      assert.match(
        await patch('application/merge-patch+json', '{"metadata":{"labels":{"a":"1"}}}'),
        exact(REVISION),
      );
      assert.match(
        await patch('application/strategic-merge-patch+json', '{"metadata":{"labels":{"b":"2"}}}'),
        exact(REVISION),
      );
      assert.match(
        await patch(
          'application/json-patch+json',
          '[{"op":"replace","path":"/revision","value":9007199254740993}]',
        ),
        exact('9007199254740993'),
      );
      const applied = await patch(
        'application/apply-patch+yaml',
        `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r1"},"data":{"a":1},"revision":${REVISION}}`,
        '?fieldManager=test&force=true',
      );
      assert.match(applied, exact(REVISION));
    });

    it('clients read it exactly and write it back unchanged (Protobuf and JSON)', async () => {
      for (const [name, client] of [
        ['r-pb', pb],
        ['r-json', json],
      ] as const) {
        const revs = client.resource('controllerrevisions.apps').namespace('default');
        const created = await revs.create({
          metadata: { name },
          data: {},
          revision: BigInt(REVISION) + 1n,
        } as any);
        assert.equal(created.revision, BigInt(REVISION) + 1n, name);
        const got = await revs.get(name);
        assert.equal(got.revision, BigInt(REVISION) + 1n, name);
        got.metadata.labels = { touched: 'yes' };
        const updated = await revs.update(got);
        assert.equal(updated.revision, BigInt(REVISION) + 1n, name);
        const raw = await api('GET', `${PATH}/${name}`);
        assert.match(raw.body.toString(), /"revision":3546343826724306002\b/, name);
      }
    });
  });
}
