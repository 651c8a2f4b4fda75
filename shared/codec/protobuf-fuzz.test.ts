// Random and mutated bytes: decodeObject must return or throw ProtobufError,
// never anything else, and never take long.
import assert from 'node:assert/strict';
import { decodeObject, encodeObject, ProtobufError, wrapEnvelope } from './protobuf';
import { fixtureOf } from './protobuf-fixtures';
import { WatchFrameDecoder, encodeWatchFrame } from './watch-frame';

/** mulberry32: a seeded PRNG, so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const small = (): Buffer[] => [
  encodeObject({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { a: 'b' }, creationTimestamp: '2024-05-01T10:00:00Z' },
    spec: {
      containers: [
        { name: 'c', image: 'i', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 'h' } } },
      ],
    },
  }),
  encodeObject({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: [{ data: { a: 'b' } }, {}] }),
  encodeObject({
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: 500,
    details: { causes: [{ field: 'x' }] },
  }),
];

/** Every field filled: ~100 KiB each. */
const big = (): Buffer[] => [
  encodeObject({ apiVersion: 'v1', kind: 'Pod', ...fixtureOf('io.k8s.api.core.v1.Pod') }),
  encodeObject({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    ...fixtureOf('io.k8s.api.apps.v1.Deployment', { variant: 1 }),
  }),
  encodeObject({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    ...fixtureOf('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition', {
      variant: 0,
      maxRepeat: 2,
    }),
  }),
];

function mutate(src: Buffer, rand: () => number): Buffer {
  const b = Buffer.from(src);
  const pick = () => Math.floor(rand() * b.length);
  switch (Math.floor(rand() * 7)) {
    case 0: // flip bits
      for (let i = 0; i < 1 + rand() * 4; i++) b[pick()] ^= 1 << Math.floor(rand() * 8);
      return b;
    case 1: // random byte values, often length-ish ones
      for (let i = 0; i < 1 + rand() * 3; i++)
        b[pick()] = [0, 0x7f, 0x80, 0xff, Math.floor(rand() * 256)][Math.floor(rand() * 5)];
      return b;
    case 2: // truncate
      return b.subarray(0, pick());
    case 3: {
      // insert random bytes
      const at = pick();
      const junk = Buffer.from(
        Array.from({ length: 1 + Math.floor(rand() * 16) }, () => Math.floor(rand() * 256)),
      );
      return Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]);
    }
    case 4: {
      // duplicate a slice
      const at = pick();
      const len = Math.floor(rand() * 64);
      return Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]);
    }
    case 5: // overlong varints
      b.fill(0xff, pick(), pick());
      return b;
    default: {
      // keep the envelope, replace raw with random bytes
      const raw = Buffer.from(
        Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)),
      );
      return wrapEnvelope('v1', 'Pod', raw);
    }
  }
}

/** Whether b decoded; fails the test on any error other than ProtobufError, or a slow decode. */
function check(b: Buffer): boolean {
  const t0 = process.hrtime.bigint();
  let ok = true;
  try {
    decodeObject(b);
  } catch (err) {
    if (!(err instanceof ProtobufError)) {
      assert.fail(`non-ProtobufError ${String(err)} for ${b.toString('hex').slice(0, 400)}`);
    }
    ok = false;
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.ok(ms < 1000, `decode took ${ms} ms`);
  return ok;
}

describe('protobuf codec: fuzz', () => {
  it('random bytes, with and without the magic', () => {
    const rand = rng(1);
    for (let i = 0; i < 20000; i++) {
      const len = Math.floor(rand() * 64);
      const body = Buffer.from(Array.from({ length: len }, () => Math.floor(rand() * 256)));
      check(body);
      check(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), body]));
    }
  });

  it('mutated encodings of real objects', () => {
    const rand = rng(2);
    let decoded = 0;
    const run = (seeds: Buffer[], rounds: number) => {
      for (let i = 0; i < rounds; i++) {
        let b = seeds[i % seeds.length];
        for (let m = 0; m < 1 + Math.floor(rand() * 3); m++) b = mutate(b, rand);
        if (check(b)) decoded++;
      }
    };
    run(small(), 30000);
    run(big(), 1500);
    assert.ok(
      decoded > 100,
      `only ${decoded} mutants decoded: the mutations are too destructive to be useful`,
    );
  });

  it('deep nesting is refused, not a stack overflow', () => {
    const crd = (depth: number) => {
      const root: any = {};
      let deep = root;
      for (let i = 0; i < depth; i++) deep = deep.not = {};
      return {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: root } }] },
      };
    };
    assert.equal(decodeObject(encodeObject(crd(100))).kind, 'CustomResourceDefinition');
    assert.throws(() => decodeObject(encodeObject(crd(500))), /nesting too deep/);
    assert.throws(() => encodeObject(crd(200000)), ProtobufError);
  });

  it('watch frame decoder on random chunks and garbage', () => {
    const rand = rng(3);
    const frames = Buffer.concat([...small(), ...small()].map((s) => encodeWatchFrame('ADDED', s)));
    for (let i = 0; i < 5000; i++) {
      const b = i % 2 ? mutate(frames, rand) : frames;
      const d = new WatchFrameDecoder({ maxFrameBytes: 1 << 20 });
      try {
        for (let p = 0; p < b.length;) {
          const n = 1 + Math.floor(rand() * 200);
          d.push(b.subarray(p, p + n));
          p += n;
        }
      } catch (err) {
        assert.ok(err instanceof ProtobufError, String(err));
      }
    }
  });
});
