// Lists and watches against SPEC.md's resourceVersion tables, chunked
// listing, selectors and the watch start semantics.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { Agent, request } from 'undici';

describe('resource API: lists, resourceVersions and watches', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const ns = 'lists';
  const cms = `/api/v1/namespaces/${ns}/configmaps`;
  let rvAfterTen = '';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    for (let i = 0; i < 10; i++) {
      const r = await api('POST', cms, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm${i}`, labels: { i: String(i), parity: i % 2 ? 'odd' : 'even' } },
        },
      });
      rvAfterTen = r.json.metadata.resourceVersion;
    }
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const names = (r: any) => r.json.items.map((i: any) => i.metadata.name);

  describe('list', () => {
    it('returns the collection with list metadata; continue is present, empty at the end', async () => {
      const r = await api('GET', cms);
      assert.equal(r.status, 200);
      assert.equal(r.json.kind, 'ConfigMapList');
      assert.equal(r.json.apiVersion, 'v1');
      assert.equal(r.json.items.length, 10);
      assert.equal(r.json.metadata.continue, '');
      assert.ok(Number(r.json.metadata.resourceVersion) >= Number(rvAfterTen));
      assert.equal(r.json.metadata.remainingItemCount, undefined);
      for (const item of r.json.items) {
        assert.equal(item.kind, 'ConfigMap');
        assert.equal(item.apiVersion, 'v1');
      }
    });

    it('pages with limit and continue over one snapshot, with remainingItemCount', async () => {
      const p1 = await api('GET', `${cms}?limit=4`);
      assert.deepEqual(names(p1), ['cm0', 'cm1', 'cm2', 'cm3']);
      assert.ok(p1.json.metadata.continue);
      assert.equal(p1.json.metadata.remainingItemCount, 6);
      const rv = p1.json.metadata.resourceVersion;
      // Changes after the first page are not shown to its continuation.
      await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm5a' } } });
      await api('DELETE', `${cms}/cm7`);
      const p2 = await api('GET', `${cms}?limit=4&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
      assert.deepEqual(names(p2), ['cm4', 'cm5', 'cm6', 'cm7']);
      assert.equal(p2.json.metadata.resourceVersion, rv);
      assert.equal(p2.json.metadata.remainingItemCount, 2);
      const p3 = await api('GET', `${cms}?limit=4&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
      assert.deepEqual(names(p3), ['cm8', 'cm9']);
      assert.equal(p3.json.metadata.continue, '');
      assert.equal(p3.json.metadata.remainingItemCount, undefined);
      // A new list sees the changes.
      const fresh = await api('GET', cms);
      assert.ok(names(fresh).includes('cm5a'));
      assert.ok(!names(fresh).includes('cm7'));
      await api('POST', cms, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'cm7', labels: { i: '7', parity: 'odd' } },
        },
      });
      await api('DELETE', `${cms}/cm5a`);
    });

    it('omits remainingItemCount when a selector is given', async () => {
      const r = await api('GET', `${cms}?limit=2&labelSelector=parity%3Deven`);
      assert.deepEqual(names(r), ['cm0', 'cm2']);
      assert.ok(r.json.metadata.continue);
      assert.equal(r.json.metadata.remainingItemCount, undefined);
      const r2 = await api(
        'GET',
        `${cms}?limit=2&labelSelector=parity%3Deven&continue=${encodeURIComponent(r.json.metadata.continue)}`,
      );
      assert.deepEqual(names(r2), ['cm4', 'cm6']);
    });

    it('filters with every label selector operator and field selectors', async () => {
      const q = async (sel: string) =>
        names(await api('GET', `${cms}?labelSelector=${encodeURIComponent(sel)}`));
      assert.deepEqual(await q('i=3'), ['cm3']);
      assert.deepEqual(await q('i==3'), ['cm3']);
      assert.equal((await q('i!=3')).length, 9);
      assert.deepEqual(await q('i in (1,2)'), ['cm1', 'cm2']);
      assert.equal((await q('i notin (1,2)')).length, 8);
      assert.equal((await q('parity')).length, 10);
      assert.equal((await q('!parity')).length, 0);
      const f = await api('GET', `${cms}?fieldSelector=${encodeURIComponent('metadata.name=cm4')}`);
      assert.deepEqual(names(f), ['cm4']);
      const nf = await api('GET', `${cms}?fieldSelector=${encodeURIComponent('metadata.name!=cm4')}`);
      assert.equal(nf.json.items.length, 9);
      const all = await api(
        'GET',
        `/api/v1/configmaps?fieldSelector=${encodeURIComponent(`metadata.namespace=${ns}`)}`,
      );
      assert.equal(all.json.items.length, 10);
    });

    it('answers 400 for bad selectors and unsupported field labels', async () => {
      const bad = await api('GET', `${cms}?labelSelector=${encodeURIComponent('a in (b')}`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.reason, 'BadRequest');
      const field = await api('GET', `${cms}?fieldSelector=${encodeURIComponent('spec.nodeName=x')}`);
      assert.equal(field.status, 400);
      // Kinds without field labels of their own: Kubernetes' default conversion and its message.
      assert.equal(
        field.json.message,
        '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
      );
      const pods = await api(
        'GET',
        `/api/v1/pods?fieldSelector=${encodeURIComponent('spec.nodeName=x,status.phase=Running')}`,
      );
      assert.equal(pods.status, 200);
    });

    it('follows the resourceVersion/resourceVersionMatch table', async () => {
      const rv = (await api('GET', cms)).json.metadata.resourceVersion;
      const cases: [string, number][] = [
        ['resourceVersion=0', 200],
        [`resourceVersion=${rv}`, 200],
        [`resourceVersion=${rv}&limit=3`, 200],
        ['resourceVersion=0&resourceVersionMatch=NotOlderThan', 200],
        [`resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`, 200],
        [`resourceVersion=${rv}&resourceVersionMatch=NotOlderThan&limit=3`, 200],
        [`resourceVersion=${rv}&resourceVersionMatch=Exact`, 200],
        [`resourceVersion=${rv}&resourceVersionMatch=Exact&limit=3`, 200],
        ['resourceVersionMatch=Exact', 400],
        ['resourceVersionMatch=NotOlderThan', 400],
        ['resourceVersion=0&resourceVersionMatch=Exact', 400],
        [`resourceVersion=${rv}&resourceVersionMatch=Bogus`, 400],
        ['resourceVersion=abc', 400],
      ];
      for (const [query, status] of cases) {
        const r = await api('GET', `${cms}?${query}`);
        assert.equal(r.status, status, `${query} → ${r.status} ${r.json?.message ?? ''}`);
      }
      const exact = await api('GET', `${cms}?resourceVersion=${rvAfterTen}&resourceVersionMatch=Exact`);
      assert.equal(exact.json.metadata.resourceVersion, rvAfterTen);
      const first = await api('GET', `${cms}?limit=2`);
      const token = encodeURIComponent(first.json.metadata.continue);
      assert.equal((await api('GET', `${cms}?limit=2&continue=${token}&resourceVersion=0`)).status, 200);
      assert.equal((await api('GET', `${cms}?limit=2&continue=${token}&resourceVersion=${rv}`)).status, 400);
      assert.equal((await api('GET', `${cms}?limit=2&continue=not-a-token`)).status, 400);
    });

    it('answers 504 "Too large resource version" for a version the store has not reached', async () => {
      const r = await api('GET', `${cms}?resourceVersion=99999999&resourceVersionMatch=NotOlderThan`);
      assert.equal(r.status, 504);
      assert.equal(r.json.reason, 'Timeout');
      assert.match(r.json.message, /Too large resource version/);
      assert.equal(r.json.details.causes[0].reason, 'ResourceVersionTooLarge');
      const g = await api('GET', `${cms}/cm1?resourceVersion=99999999`);
      assert.equal(g.status, 504);
    });

    it('continues from the watch cache while the snapshot is current, even past compaction', async () => {
      await api('GET', `${cms}?resourceVersion=0`); // the cache is loaded
      const first = await api('GET', `${cms}?limit=3`);
      // Another resource moves the store's revision on; compaction drops the list's revision.
      await api('POST', `/api/v1/namespaces/${ns}/secrets`, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 's-' } },
      });
      await srv.running.storage.compact(await srv.running.storage.currentRevision());
      const next = await api(
        'GET',
        `${cms}?limit=3&continue=${encodeURIComponent(first.json.metadata.continue)}`,
      );
      assert.equal(next.status, 200, next.json?.message);
      assert.deepEqual(names(next), ['cm3', 'cm4', 'cm5']);
      assert.equal(next.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
      assert.equal(next.json.metadata.remainingItemCount, 4);
      const token = decodeURIComponent(next.json.metadata.continue);
      assert.ok(token);
      // A change to the list's resource ends that: the rest would come from the compacted store.
      await api('PATCH', `${cms}/cm0`, {
        body: { data: { y: '1' } },
        contentType: 'application/merge-patch+json',
      });
      const after = await api('GET', `${cms}?limit=3&continue=${encodeURIComponent(token)}`);
      assert.equal(after.status, 410);
    });

    it('answers 410 for compacted versions and expired continue tokens', async () => {
      const first = await api('GET', `${cms}?limit=2`);
      const oldRV = first.json.metadata.resourceVersion;
      await api('PATCH', `${cms}/cm1`, {
        body: { data: { x: '1' } },
        contentType: 'application/merge-patch+json',
      });
      await srv.running.storage.compact(await srv.running.storage.currentRevision());
      const exact = await api('GET', `${cms}?resourceVersion=${oldRV}&resourceVersionMatch=Exact`);
      assert.equal(exact.status, 410);
      assert.equal(exact.json.reason, 'Expired');
      const cont = await api(
        'GET',
        `${cms}?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`,
      );
      assert.equal(cont.status, 410);
      assert.equal(cont.json.reason, 'Expired');
      assert.ok(cont.json.metadata.continue, 'a token to continue inconsistently');
      const inconsistent = await api(
        'GET',
        `${cms}?limit=2&continue=${encodeURIComponent(cont.json.metadata.continue)}`,
      );
      assert.equal(inconsistent.status, 200);
      assert.deepEqual(names(inconsistent), ['cm2', 'cm3']);
    });
  });

  describe('watch', () => {
    /** Opens a watch and collects events until `count` arrived or the stream ended. */
    async function watch(
      query: string,
      count: number,
      during?: () => Promise<void>,
      timeoutMs = 5000,
    ): Promise<any[]> {
      const dispatcher = new Agent({
        connect: { ca: srv.config.caPem, cert: srv.config.certPem, key: srv.config.keyPem },
      });
      const ac = new AbortController();
      const res = await request(`${srv.url}${cms}?watch=1&${query}`, { dispatcher, signal: ac.signal });
      assert.equal(res.statusCode, 200);
      const events: any[] = [];
      let buf = '';
      const timer = setTimeout(() => ac.abort(), timeoutMs);
      const duringDone = during?.();
      try {
        for await (const chunk of res.body) {
          buf += chunk.toString();
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim()) events.push(JSON.parse(line));
          }
          if (events.length >= count) break;
        }
      } catch {
        // aborted
      }
      clearTimeout(timer);
      ac.abort();
      await duringDone;
      await dispatcher.close();
      return events;
    }

    it('starts with synthetic ADDED events for an unset or "0" resourceVersion', async () => {
      for (const q of ['', 'resourceVersion=0']) {
        const evs = await watch(q, 10);
        assert.equal(evs.length, 10, q);
        assert.ok(evs.every((e) => e.type === 'ADDED'));
      }
    });

    it('follows live changes after the initial state when no resourceVersion is given', async () => {
      const evs = await watch('', 11, async () => {
        await new Promise((r) => setTimeout(r, 200));
        await api('POST', cms, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-initial' } },
        });
      });
      assert.equal(evs.length, 11);
      assert.deepEqual([evs[10].type, evs[10].object.metadata.name], ['ADDED', 'after-initial']);
      await api('DELETE', `${cms}/after-initial`);
    });

    it('starts exactly after a given resourceVersion, with MODIFIED and DELETED', async () => {
      const rv = (await api('GET', cms)).json.metadata.resourceVersion;
      const evs = await watch(`resourceVersion=${rv}`, 3, async () => {
        await new Promise((r) => setTimeout(r, 100));
        await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' } } });
        await api('PATCH', `${cms}/w1`, {
          body: { data: { a: 'b' } },
          contentType: 'application/merge-patch+json',
        });
        await api('DELETE', `${cms}/w1`);
      });
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED w1', 'MODIFIED w1', 'DELETED w1'],
      );
      assert.ok(
        Number(evs[2].object.metadata.resourceVersion) > Number(evs[1].object.metadata.resourceVersion),
      );
    });

    it('turns selector transitions into ADDED and DELETED', async () => {
      const rv = (await api('GET', cms)).json.metadata.resourceVersion;
      const evs = await watch(`resourceVersion=${rv}&labelSelector=sel%3Dyes`, 2, async () => {
        await new Promise((r) => setTimeout(r, 100));
        await api('PATCH', `${cms}/cm3`, {
          body: { metadata: { labels: { sel: 'yes' } } },
          contentType: 'application/merge-patch+json',
        });
        await api('PATCH', `${cms}/cm3`, {
          body: { metadata: { labels: { sel: 'no' } } },
          contentType: 'application/merge-patch+json',
        });
      });
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'DELETED'],
      );
    });

    it('sends bookmarks and the initial-events-end bookmark with sendInitialEvents', async () => {
      const evs = await watch(
        'sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=',
        11,
      );
      assert.equal(evs.filter((e) => e.type === 'ADDED').length, 10);
      const last = evs[10];
      assert.equal(last.type, 'BOOKMARK');
      assert.equal(last.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
      assert.ok(last.object.metadata.resourceVersion);
      const t = await watch(
        'allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=' + last.object.metadata.resourceVersion,
        1,
        undefined,
        4000,
      );
      assert.equal(t[0]?.type, 'BOOKMARK', 'a bookmark before the timeout ends the watch');
    });

    it('ends the stream after timeoutSeconds', async () => {
      const start = Date.now();
      const rv = (await api('GET', cms)).json.metadata.resourceVersion;
      const evs = await watch(`resourceVersion=${rv}&timeoutSeconds=1`, 1000, undefined, 8000);
      assert.equal(evs.length, 0);
      assert.ok(Date.now() - start < 5000);
    });

    it('answers 410 Expired for a compacted resourceVersion', async () => {
      const r = await api('GET', `${cms}?watch=1&resourceVersion=1`);
      const text = r.body.toString();
      if (r.status === 200) {
        const ev = JSON.parse(text.split('\n')[0]);
        assert.equal(ev.type, 'ERROR');
        assert.equal(ev.object.code, 410);
      } else {
        assert.equal(r.status, 410);
        assert.equal(r.json.reason, 'Expired');
      }
    });
  });
});
