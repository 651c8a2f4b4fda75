// The store's kv and log records are LZ4-compressed by lmdb-js with a dictionary, and records
// written before compression or the dictionary were on (by an older tkube) must read back unchanged.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { open } from 'lmdb';
import { encodeObject } from '../../../shared/codec/protobuf';
import { openDbs } from './dbs';
import { STORE_DICTIONARY, STORE_DICTIONARY_VERSION } from './dictionary';
import { CREATE, encodeKv, encodeLog, Event, Kv, kvKeys, logKeys, Scratch, UPDATE } from './codec';
import { tempDir } from './test-util';

/** A value that compresses well, and one whose first byte is LZ4's marker. */
const big = Buffer.from('k8s\0' + '{"f:metadata":{"f:labels":{}}}'.repeat(100));
const marked = Buffer.concat([Buffer.from([0xff, 0xfe, 0xfa]), Buffer.alloc(1500, 7)]);

/** A running pod as stored, of another shape than the dictionary's (two containers, env, volume). */
function storedPod(i: number): Buffer {
  const time = '2026-03-04T05:06:07Z';
  const fields = (f: object) => ({
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'v1',
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: f,
  });
  return encodeObject({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `redis-${i}`,
      namespace: 'cache',
      uid: `6f1d2c3b-${String(i).padStart(4, '0')}-4a5b-9c8d-7e6f5a4b3c2d`,
      creationTimestamp: time,
      labels: { 'app.kubernetes.io/name': 'redis', 'statefulset.kubernetes.io/pod-name': `redis-${i}` },
      managedFields: [
        fields({
          'f:metadata': { 'f:labels': { '.': {}, 'f:app.kubernetes.io/name': {} } },
          'f:spec': { 'f:containers': {} },
        }),
        {
          ...fields({ 'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:phase': {} } }),
          manager: 'kubelet',
          subresource: 'status',
        },
      ],
    },
    spec: {
      containers: ['redis', 'exporter'].map((name, c) => ({
        name,
        image: `${name}:7.${c}`,
        env: [{ name: 'REDIS_PORT', value: '6379' }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
      })),
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-redis-${i}` } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 7}`,
      schedulerName: 'default-scheduler',
      tolerations: ['not-ready', 'unreachable'].map((t) => ({
        key: `node.kubernetes.io/${t}`,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      })),
    },
    status: {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: time,
      })),
      hostIP: `10.0.0.${i % 7}`,
      podIP: `10.1.${i % 250}.7`,
      startTime: time,
      qosClass: 'BestEffort',
    },
  });
}

/** kv and log as the version before the dictionary opened them: compressed, no dictionary. */
function openWithoutDictionary(dir: string) {
  const env = open({ path: dir, maxDbs: 8 });
  const none = { threshold: 1000, dictionary: Buffer.alloc(0) };
  const db = (name: string, compression: object) =>
    env.openDB({
      name,
      encoding: 'binary',
      keyEncoder: name === 'kv' ? kvKeys : logKeys,
      compression,
    } as never) as {
      put(k: unknown, v: Buffer): unknown;
    };
  return { env, kvDb: db('kv', { ...none, startingOffset: 7 }), logDb: db('log', none) };
}

/** The raw bytes of kv and log as stored, read with no codec and no compression. */
function rawRecords(dir: string, key: string, rev: number): { kv: Buffer; log: Buffer } {
  const env = open({ path: dir, maxDbs: 8 });
  try {
    const kvDb = env.openDB({ name: 'kv', encoding: 'binary', keyEncoder: kvKeys } as never);
    const logDb = env.openDB({ name: 'log', encoding: 'binary', keyEncoder: logKeys } as never);
    return { kv: Buffer.from(kvDb.getBinary(key)!), log: Buffer.from(logDb.getBinary(rev)!) };
  } finally {
    env.close();
  }
}

describe('embedded: compressed records', () => {
  it('stores large records compressed and reads them back', async () => {
    const t = tempDir();
    try {
      const dbs = openDbs(t.dir);
      const s = new Scratch();
      const kv = new Kv('/registry/a', big, 2 ** 40, 2 ** 40 + 1, 0);
      await dbs.env.transaction(() => {
        dbs.kv.put('/registry/a', encodeKv(s, kv));
        dbs.log.put(2 ** 40 + 1, encodeLog(s, UPDATE, '/registry/a', 2 ** 40 + 1, kv, kv, true));
      });
      const got = dbs.kv.get('/registry/a')!;
      assert.deepEqual([got.value, got.createRevision, got.modRevision], [big, 2 ** 40, 2 ** 40 + 1]);
      const ev = dbs.log.get(2 ** 40 + 1) as Event;
      assert.deepEqual([ev.kv!.value, ev.prevKv!.value], [big, big]);
      await dbs.env.close();

      const raw = rawRecords(t.dir, '/registry/a', 2 ** 40 + 1);
      assert.ok(raw.kv.length < big.length / 2, `kv record of ${raw.kv.length} bytes`);
      assert.ok(raw.kv[7] >= 250, 'kv record carries the compression marker after its plain prefix');
      assert.ok(raw.log.length < big.length / 2, `log record of ${raw.log.length} bytes`);
    } finally {
      t.remove();
    }
  });

  it('reads records written without compression, and round-trips values that start with its marker', async () => {
    const t = tempDir();
    try {
      // An older store: the same records, put with no compression.
      const s = new Scratch();
      // A revision whose double's low byte is 0xfb: a marker at byte 0 would misread it.
      const rev = 2 ** 52 + 0xfb;
      const old = new Kv('/registry/old', big, rev, rev, 0);
      const env = open({ path: t.dir, maxDbs: 8 });
      const kvDb = env.openDB({ name: 'kv', encoding: 'binary', keyEncoder: kvKeys } as never);
      const logDb = env.openDB({ name: 'log', encoding: 'binary', keyEncoder: logKeys } as never);
      await env.transaction(() => {
        kvDb.put('/registry/old', Buffer.from(encodeKv(s, old)));
        logDb.put(3, Buffer.from(encodeLog(s, CREATE, '/registry/old', 3, old, null, false)));
      });
      await env.close();

      const dbs = openDbs(t.dir);
      const got = dbs.kv.get('/registry/old')!;
      assert.deepEqual([got.value, got.createRevision, got.modRevision], [big, rev, rev]);
      assert.deepEqual((dbs.log.get(3) as Event).kv!.value, big);

      const small = new Kv('/registry/m', marked, 4, 4, 0);
      await dbs.env.transaction(() => {
        dbs.kv.put('/registry/m', encodeKv(s, small));
        dbs.log.put(4, encodeLog(s, CREATE, '/registry/m', 4, small, null, false));
      });
      assert.deepEqual(dbs.kv.get('/registry/m')!.value, marked);
      assert.deepEqual((dbs.log.get(4) as Event).kv!.value, marked);
      await dbs.env.close();
    } finally {
      t.remove();
    }
  });

  it('compresses with a frozen dictionary: a pod takes under 60% of the bytes it takes without', async () => {
    // Records written with the dictionary need its exact bytes to read back.
    assert.equal(
      createHash('sha256').update(STORE_DICTIONARY).digest('hex'),
      'bf70e999d52a7c307131f2b7f568bab418ecfb12e490dc8e65acce47930bc2dd',
    );
    assert.equal(STORE_DICTIONARY.length % 8, 0, 'lmdb-js drops the bytes past a multiple of 8');
    const t = tempDir();
    const u = tempDir();
    try {
      const pod = storedPod(1);
      const s = new Scratch();
      const kv = new Kv('/registry/pods/cache/redis-1', pod, 5, 5, 0);
      const put = (
        kvDb: { put(k: string, v: Buffer): unknown },
        logDb: { put(r: number, v: Buffer): unknown },
      ) => {
        kvDb.put(kv.key, Buffer.from(encodeKv(s, kv)));
        logDb.put(5, Buffer.from(encodeLog(s, CREATE, kv.key, 5, kv, null, false)));
      };
      const dbs = openDbs(t.dir);
      await dbs.env.transaction(() => put(dbs.kv, dbs.log));
      assert.deepEqual(dbs.kv.get(kv.key)!.value, pod);
      await dbs.env.close();
      // The same records compressed as before the dictionary.
      const { env, kvDb, logDb } = openWithoutDictionary(u.dir);
      await env.transaction(() => put(kvDb, logDb));
      await env.close();
      const withDict = rawRecords(t.dir, kv.key, 5);
      const without = rawRecords(u.dir, kv.key, 5);
      for (const db of ['kv', 'log'] as const)
        assert.ok(
          withDict[db].length < without[db].length * 0.6,
          `${db}: ${withDict[db].length} bytes with the dictionary, ${without[db].length} without (${pod.length} plain)`,
        );
    } finally {
      t.remove();
      u.remove();
    }
  });

  it('reads records compressed without the dictionary, and records its version', async () => {
    const t = tempDir();
    try {
      const s = new Scratch();
      const pods = [1, 2, 3].map(
        (i) => new Kv(`/registry/pods/cache/redis-${i}`, storedPod(i), 10 + i, 10 + i, 0),
      );
      // A store of the version before the dictionary: the same compression, no dictionary, no version.
      const { env, kvDb, logDb } = openWithoutDictionary(t.dir);
      await env.transaction(() => {
        for (const p of pods) {
          kvDb.put(p.key, Buffer.from(encodeKv(s, p)));
          logDb.put(p.modRevision, Buffer.from(encodeLog(s, CREATE, p.key, p.modRevision, p, null, false)));
        }
      });
      await env.close();
      assert.ok(rawRecords(t.dir, pods[0].key, 11).kv[7] >= 250, 'the old record is compressed');

      const dbs = openDbs(t.dir);
      for (const p of pods) {
        assert.deepEqual(dbs.kv.get(p.key)!.value, p.value);
        assert.deepEqual((dbs.log.get(p.modRevision) as Event).kv!.value, p.value);
      }
      assert.equal(dbs.meta.get('dictionary'), STORE_DICTIONARY_VERSION);
      await dbs.env.close();
    } finally {
      t.remove();
    }
  });

  it('refuses a store written with a dictionary it does not know', async () => {
    const t = tempDir();
    try {
      const dbs = openDbs(t.dir);
      dbs.meta.putSync('dictionary', STORE_DICTIONARY_VERSION + 1);
      await dbs.env.close();
      assert.throws(() => openDbs(t.dir), /written with store dictionary 2 by a newer tkube/);
      // Refused before anything was written: the version is still the unknown one.
      const env = open({ path: t.dir, maxDbs: 8 });
      const meta = env.openDB({ name: 'meta', encoding: 'binary' } as never);
      assert.equal(Buffer.from(meta.getBinary('dictionary')!).readDoubleLE(0), STORE_DICTIONARY_VERSION + 1);
      await env.close();
    } finally {
      t.remove();
    }
  });
});
