import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { builtinResources } from '../api/catalog';
import { allProtoMessages, definitionOf, formatAPIVersion } from '../api/schema';
import {
  decodeMessage,
  decodeObject,
  encodeListFromRawItems,
  encodeMessage,
  encodeObject,
  ProtobufError,
  protobufSupported,
  wrapEnvelope,
} from './protobuf';
import { fixtureOf } from './protobuf-fixtures';
import { messageOfKind } from './protobuf-plan';

interface KindCase {
  apiVersion: string;
  kind: string;
  definition: string;
}

/** Every kind of the catalog, its subresource kinds, their List kinds, and Status. */
function catalogKinds(): KindCase[] {
  const seen = new Map<string, KindCase>();
  const add = (group: string, version: string, kind: string) => {
    const definition = definitionOf({ group, version, kind });
    if (definition)
      seen.set(`${group}/${version}/${kind}`, {
        apiVersion: formatAPIVersion(group, version),
        kind,
        definition,
      });
    return definition;
  };
  for (const r of builtinResources()) {
    if (!add(r.group, r.version, r.kind)) throw new Error(`no definition for ${r.groupVersion} ${r.kind}`);
    add(r.group, r.version, r.listKind);
    for (const s of r.subresources ?? []) add(s.group ?? r.group, s.version ?? r.version, s.kind);
  }
  add('', 'v1', 'Status');
  return [...seen.values()];
}

/** protobufjs types built straight from proto.json: an independent reading of the same wire format. */
let pbRoot: protobuf.Root | undefined;
function pbType(message: string): protobuf.Type {
  if (!pbRoot) {
    pbRoot = new protobuf.Root();
    for (const [name, m] of Object.entries(allProtoMessages())) {
      const i = name.lastIndexOf('.');
      const t = new protobuf.Type(name.slice(i + 1));
      for (const f of m.fields) {
        if (f.type === 'map') t.add(new protobuf.MapField(f.name, f.n, f.key!, f.value!));
        else t.add(new protobuf.Field(f.name, f.n, f.type, f.repeated ? 'repeated' : 'optional'));
      }
      pbRoot.define(name.slice(0, i)).add(t);
    }
    pbRoot.resolveAll();
  }
  return pbRoot.lookupType(message);
}

const RAW_FIELD = 2; // runtime.Unknown.raw, checked against the facts in the golden tests
function rawOf(envelope: Buffer): Buffer {
  const Unknown = pbType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const u = Unknown.decode(envelope.subarray(4)) as unknown as { raw: Uint8Array };
  assert.equal(RAW_FIELD, Unknown.fields.raw.id);
  return Buffer.from(u.raw);
}

/** Records which fields of which messages a decoded protobufjs message carries. */
function recordFields(t: protobuf.Type, m: any, seen: Set<string>): void {
  for (const f of t.fieldsArray) {
    const v = m[f.name];
    if (v === undefined || v === null || !Object.prototype.hasOwnProperty.call(m, f.name)) continue;
    const values = f.map ? Object.values(v) : f.repeated ? (v as unknown[]) : [v];
    if (values.length === 0) continue;
    seen.add(`${t.fullName.slice(1)}.${f.name}`);
    if (f.resolvedType instanceof protobuf.Type)
      for (const x of values) recordFields(f.resolvedType, x, seen);
  }
}

/** Every field of every message reachable from a message. */
function reachableFields(message: string, out: Set<string>, visited = new Set<string>()): void {
  if (visited.has(message)) return;
  visited.add(message);
  for (const f of allProtoMessages()[message].fields) {
    out.add(`${message}.${f.name}`);
    const t = f.type === 'map' ? f.value! : f.type;
    if (t.includes('.')) reachableFields(t, out, visited);
  }
}

describe('protobuf codec: every built-in kind round-trips', () => {
  const kinds = catalogKinds();
  const covered = new Set<string>();

  it('covers the catalog', () => {
    assert.ok(kinds.length > 150, `only ${kinds.length} kinds`);
    for (const k of kinds) assert.ok(protobufSupported(k.apiVersion, k.kind), `${k.apiVersion} ${k.kind}`);
  });

  for (const k of kinds) {
    it(`${k.apiVersion} ${k.kind}`, () => {
      for (const variant of [0, 1] as const) {
        const obj = {
          apiVersion: k.apiVersion,
          kind: k.kind,
          ...fixtureOf(k.definition, { variant, maxRepeat: 2 }),
        };
        const bytes = encodeObject(obj);
        const back = decodeObject(bytes);
        assert.deepStrictEqual(back, obj);
        // The same bytes through protobufjs (types from proto.json): it reads them and writes them back identically.
        const msg = messageOfKind(k.apiVersion, k.kind)!;
        const raw = rawOf(bytes);
        const T = pbType(msg);
        const decoded = T.decode(raw);
        recordFields(T, decoded, covered);
        const again = Buffer.from(T.encode(decoded).finish());
        assert.ok(again.equals(raw), `protobufjs re-encoding differs for ${k.kind} variant ${variant}`);
        // Bare message + envelope is the same as the object encoding.
        assert.ok(wrapEnvelope(k.apiVersion, k.kind, encodeMessage(k.apiVersion, k.kind, obj)).equals(bytes));
        assert.deepStrictEqual(decodeMessage(k.apiVersion, k.kind, raw), obj);
      }
    });
  }

  it('the fixtures filled every field of every message reachable from these kinds', () => {
    const expected = new Set<string>();
    for (const k of kinds) reachableFields(messageOfKind(k.apiVersion, k.kind)!, expected);
    const missing = [...expected].filter((f) => !covered.has(f));
    assert.deepStrictEqual(missing, []);
    assert.ok(expected.size > 2000, `${expected.size} fields`);
  });

  it('recursive schemas (JSONSchemaProps three levels deep)', () => {
    const def = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition';
    const obj = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      ...fixtureOf(def, { variant: 1, maxRepeat: 3 }),
    };
    assert.deepStrictEqual(decodeObject(encodeObject(obj)), obj);
  });
});

describe('protobuf codec: lists', () => {
  const pod = (name: string) => ({
    metadata: { name, namespace: 'default', resourceVersion: '7' },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });

  it('encodeListFromRawItems equals encodeObject of the list', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: { resourceVersion: '12', continue: 'abc', remainingItemCount: 3 },
      items: [pod('a'), pod('b'), pod('c')],
    };
    const rawItems = list.items.map((p) => encodeMessage('v1', 'Pod', p));
    const fast = Buffer.concat(encodeListFromRawItems('v1', 'PodList', list.metadata, rawItems));
    assert.ok(fast.equals(encodeObject(list)));
    assert.deepStrictEqual(decodeObject(fast), list);
  });

  it('an empty list', () => {
    const list = { apiVersion: 'apps/v1', kind: 'DeploymentList', metadata: { resourceVersion: '1' } };
    const b = Buffer.concat(encodeListFromRawItems('apps/v1', 'DeploymentList', list.metadata, []));
    assert.ok(b.equals(encodeObject(list)));
    assert.deepStrictEqual(decodeObject(b), list);
  });

  it('meta.k8s.io PartialObjectMetadataList (items before metadata in v1beta1)', () => {
    for (const v of ['v1', 'v1beta1']) {
      const list = {
        apiVersion: `meta.k8s.io/${v}`,
        kind: 'PartialObjectMetadataList',
        metadata: { resourceVersion: '9' },
        items: [{ metadata: { name: 'x', labels: { a: 'b' } } }],
      };
      const raw = list.items.map((i) => encodeMessage('meta.k8s.io/v1', 'PartialObjectMetadata', i));
      const b = Buffer.concat(encodeListFromRawItems(list.apiVersion, list.kind, list.metadata, raw));
      assert.ok(b.equals(encodeObject(list)), v);
      assert.deepStrictEqual(decodeObject(b), list);
    }
  });
});

describe('protobuf codec: kinds and values', () => {
  it('protobufSupported', () => {
    assert.equal(protobufSupported('v1', 'Pod'), true);
    assert.equal(protobufSupported('v1', 'PodList'), true);
    assert.equal(protobufSupported('v1', 'Status'), true);
    assert.equal(protobufSupported('apps/v1', 'WatchEvent'), true);
    assert.equal(protobufSupported('v1', 'DeleteOptions'), true);
    assert.equal(protobufSupported('v1', 'APIGroupList'), true);
    assert.equal(protobufSupported('meta.k8s.io/v1', 'PartialObjectMetadata'), true);
    assert.equal(protobufSupported('meta.k8s.io/v1', 'PartialObjectMetadataList'), true);
    assert.equal(protobufSupported('meta.k8s.io/v1', 'Table'), false);
    assert.equal(protobufSupported('stable.example.com/v1', 'CronTab'), false);
    assert.equal(protobufSupported('v1', 'CronTab'), false);
    assert.equal(protobufSupported('apps/v1', 'Pod'), false);
    assert.equal(protobufSupported('', ''), false);
  });

  it('refuses kinds without a message and values of the wrong type', () => {
    assert.throws(() => encodeObject({ apiVersion: 'example.com/v1', kind: 'Foo' }), ProtobufError);
    assert.throws(() => encodeObject({ kind: 'Pod' }), ProtobufError);
    assert.throws(
      () => encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 5 } }),
      /ObjectMeta.name/,
    );
    assert.throws(() => encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: [] }), ProtobufError);
    const bad = (spec: object) => () => encodeObject({ apiVersion: 'apps/v1', kind: 'Deployment', spec });
    assert.throws(bad({ replicas: 1.5 }), /int32/);
    assert.throws(bad({ replicas: 2 ** 31 }), /int32/);
    assert.throws(bad({ paused: 'yes' }), /bool/);
    assert.throws(bad({ selector: { matchLabels: [] } }), ProtobufError);
    assert.throws(
      () => encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: 'yesterday' } }),
      /RFC 3339/,
    );
  });

  it('times: offsets, fractions, zero and null', () => {
    const rt = (t: unknown) =>
      decodeObject(encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: t } }))
        .metadata.creationTimestamp;
    assert.equal(rt('2024-05-01T12:00:00+02:00'), '2024-05-01T10:00:00Z');
    assert.equal(rt('2024-05-01T10:00:00.999Z'), '2024-05-01T10:00:00Z'); // Time has second precision in JSON
    assert.equal(rt('1970-01-01T00:00:00Z'), '1970-01-01T00:00:00Z');
    assert.equal(rt('1600-02-29T01:02:03Z'), '1600-02-29T01:02:03Z');
    assert.equal(rt(null), null);
    assert.equal(rt('0001-01-01T00:00:00Z'), null); // Go's zero time
    const ev = (t: string) =>
      decodeObject(encodeObject({ apiVersion: 'events.k8s.io/v1', kind: 'Event', eventTime: t })).eventTime;
    assert.equal(ev('2024-05-01T10:00:00.1234567Z'), '2024-05-01T10:00:00.123456Z');
    assert.equal(ev('2024-05-01T10:00:00Z'), '2024-05-01T10:00:00.000000Z');
  });

  it('int64 past 2^53 as bigints, exactly (ControllerRevision.revision)', () => {
    for (const revision of [2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 53n) - 3n]) {
      const cr = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision };
      assert.equal(decodeObject(encodeObject(cr)).revision, revision);
    }
    const safe = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r' },
      revision: 2n ** 53n - 1n,
    };
    assert.equal(decodeObject(encodeObject(safe)).revision, Number.MAX_SAFE_INTEGER);
  });

  it('int64 and int32 extremes, doubles, unicode', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      spec: {
        versions: [
          {
            name: 'v1',
            schema: {
              openAPIV3Schema: {
                maxLength: Number.MAX_SAFE_INTEGER,
                minLength: -Number.MAX_SAFE_INTEGER,
                maxItems: 2 ** 32,
                minItems: -1,
                maximum: 1e300,
                minimum: -0.000001,
                description: 'x'.repeat(300) + '\u{1F600}\uD800 lone',
              },
            },
          },
        ],
      },
    };
    const back = decodeObject(encodeObject(crd));
    const s = back.spec.versions[0].schema.openAPIV3Schema;
    assert.equal(s.maxLength, Number.MAX_SAFE_INTEGER);
    assert.equal(s.minLength, -Number.MAX_SAFE_INTEGER);
    assert.equal(s.maxItems, 2 ** 32);
    assert.equal(s.minItems, -1);
    assert.equal(s.maximum, 1e300);
    assert.equal(s.minimum, -0.000001);
    assert.equal(s.description, 'x'.repeat(300) + '\u{1F600}\uFFFD lone');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { securityContext: { runAsUser: -5, fsGroup: 2 ** 40 } },
    };
    assert.deepStrictEqual(decodeObject(encodeObject(pod)), pod);
  });

  it('map keys are written in Go order (bytewise)', () => {
    const data = { b: '1', '9': '2', '10': '3', é: '4', A: '5', '\uFFFF': '6', '😀': '7' };
    const raw = rawOf(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', data }));
    const dataField = pbType('k8s.io.api.core.v1.ConfigMap').fields.data.id;
    const keys: string[] = [];
    const r = protobuf.Reader.create(raw);
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 !== dataField) {
        r.skipType(tag & 7);
        continue;
      }
      const entry = protobuf.Reader.create(r.bytes());
      entry.uint32(); // key tag
      keys.push(entry.string());
    }
    assert.deepStrictEqual(keys, ['10', '9', 'A', 'b', 'é', '\uFFFF', '😀']);
    assert.deepStrictEqual(
      decodeObject(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', data })).data,
      data,
    );
  });

  it('nulls inside lists and maps become zero values, as in Go', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: null } };
    assert.deepStrictEqual(decodeObject(encodeObject(cm)).data, { a: '' });
    const pod = { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c', args: ['a', null] }] } };
    assert.deepStrictEqual(decodeObject(encodeObject(pod)).spec.containers[0].args, ['a', '']);
  });

  it('a map value key "__proto__" stays an own property', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', data: JSON.parse('{"__proto__": "x", "a": "b"}') };
    const back = decodeObject(encodeObject(cm));
    assert.equal(Object.getPrototypeOf(back.data), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(back.data, '__proto__')?.value, 'x');
  });

  it('a large object (strings and messages over 16 KiB)', () => {
    const data: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) data[`key-${i}`] = 'v'.repeat(i % 300);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data };
    assert.deepStrictEqual(decodeObject(encodeObject(cm)), cm);
  });
});

describe('protobuf codec: zero values as Go writes them', () => {
  it('drops the zeros of non-pointer omitempty fields, keeps those of pointer fields', () => {
    // What kubectl create deployment sends: every non-pointer field, zero or not.
    const sent = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: '', uid: '', generation: 0 },
      spec: {
        replicas: 0,
        revisionHistoryLimit: 0,
        minReadySeconds: 0,
        paused: false,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { name: '', namespace: '', labels: { app: 'web' } },
          spec: {
            containers: [{ name: 'c', image: 'x', workingDir: '', stdin: false, tty: false }],
            hostNetwork: false,
            nodeName: '',
            terminationGracePeriodSeconds: 0,
            automountServiceAccountToken: false,
          },
        },
      },
    };
    const got = decodeObject(encodeObject(sent));
    assert.deepEqual(got.metadata, { name: 'web' });
    assert.deepEqual(got.spec.template.metadata, { labels: { app: 'web' } });
    assert.deepEqual(got.spec.template.spec.containers, [{ name: 'c', image: 'x' }]);
    assert.equal('minReadySeconds' in got.spec, false);
    assert.equal('paused' in got.spec, false);
    assert.equal('hostNetwork' in got.spec.template.spec, false);
    assert.equal('nodeName' in got.spec.template.spec, false);
    // Pointers: a zero is a value.
    assert.equal(got.spec.replicas, 0);
    assert.equal(got.spec.revisionHistoryLimit, 0);
    assert.equal(got.spec.template.spec.terminationGracePeriodSeconds, 0);
    assert.equal(got.spec.template.spec.automountServiceAccountToken, false);
  });
});
