// A golden corpus of one object per built-in kind, each written twice (with
// every field filled, in reverse order, and with nothing but its name), checked
// against the rules of Go's encoding/json read from the Go struct facts: key
// order is field order with inline structs flattened, omitempty zeros are left
// out, fields without omitempty are always there, map keys are sorted.
import assert from 'node:assert/strict';
import { goStructFacts, resourceFacts } from '../api/schema';
import type { GoField } from '../api/schema-types';
import { goJSONText, goShapeObject } from './go-json';
import { omittedWhenZero } from './protobuf-plan';

const OMITEMPTY = 1;
const OMITZERO = 2;
const POINTER = 4;
const SLICE = 8;
const MAP = 16;
const INLINE = 32;

const defs = () => goStructFacts().defs;

function fieldsOf(def: string): GoField[] {
  const out: GoField[] = [];
  for (const f of defs()[def]?.fields ?? []) {
    if ((f.f ?? 0) & INLINE && f.r) out.push(...fieldsOf(f.r));
    else out.push(f);
  }
  return out;
}

const isStruct = (ref: string | undefined) => !!ref && !!defs()[ref] && !defs()[ref].custom;

const CUSTOM_SAMPLES: Record<string, unknown> = {
  Time: '2026-01-02T03:04:05Z',
  MicroTime: '2026-01-02T03:04:05.000006Z',
  Duration: '1m0s',
  Quantity: '1',
  IntOrString: 'http',
  RawExtension: { apiVersion: 'v1', kind: 'Pod' },
  FieldsV1: { 'f:a': {} },
  JSON: { any: 1 },
  JSONSchemaPropsOrBool: true,
  JSONSchemaPropsOrArray: { type: 'string' },
  JSONSchemaPropsOrStringArray: ['a'],
  GroupVersion: 'g/v',
  Unknown: {},
};

/** A non-zero sample for one value of a field (not the slice or map around it). */
function sample(f: GoField, depth: number): unknown {
  if (f.r && defs()[f.r]?.custom) return CUSTOM_SAMPLES[f.r.split('.').pop()!] ?? {};
  if (isStruct(f.r)) return filled(f.r!, depth + 1);
  if (typeof f.z === 'number') return 7;
  if (typeof f.z === 'boolean') return true;
  return 'v';
}

/** Every field set to a non-zero value, keys in reverse order (so order must be restored). */
function filled(def: string, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (depth > 4) return out;
  for (const f of [...fieldsOf(def)].reverse()) {
    const flags = f.f ?? 0;
    const one = () => sample(f, depth);
    if (flags & SLICE && !(f.r && defs()[f.r]?.custom)) out[f.j] = [one()];
    else if (flags & MAP) out[f.j] = { zz: one(), aa: one() };
    else out[f.j] = one();
  }
  return out;
}

const isEmptyGo = (v: unknown, f: GoField) => {
  const flags = f.f ?? 0;
  if (v === null) return true;
  if (flags & (SLICE | MAP) && !(flags & POINTER))
    return Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0;
  if (!(flags & POINTER) && !f.r) return v === '' || v === 0 || v === false;
  return false;
};

/** Checks one written struct against the facts; returns the problems found. */
function check(v: unknown, def: string, path: string, problems: string[], src: any): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
  const fields = fieldsOf(def);
  const order = fields.map((f) => f.j);
  const keys = Object.keys(v);
  const known = keys.filter((k) => order.includes(k));
  const positions = known.map((k) => order.indexOf(k));
  if (positions.some((p, i) => i > 0 && p < positions[i - 1])) problems.push(`${path}: keys out of Go order`);
  for (const f of fields) {
    const flags = f.f ?? 0;
    const has = Object.prototype.hasOwnProperty.call(v, f.j);
    const val = (v as Record<string, unknown>)[f.j];
    const structLike = !!f.r && !(flags & (POINTER | SLICE | MAP));
    const given = src && typeof src === 'object' ? src[f.j] : undefined;
    if (!has) {
      if (given !== undefined && !isEmptyGo(given, { ...f, f: (f.f ?? 0) & ~POINTER }))
        problems.push(`${path}.${f.j}: missing though given`);
      else if (!(flags & OMITEMPTY) && !(flags & OMITZERO))
        problems.push(`${path}.${f.j}: not omitempty but missing`);
      else if (structLike && !(flags & OMITZERO)) problems.push(`${path}.${f.j}: a struct is never omitted`);
      continue;
    }
    if (flags & OMITEMPTY && !structLike && isEmptyGo(val, f))
      problems.push(`${path}.${f.j}: omitempty zero written`);
    if (flags & MAP && val && typeof val === 'object') {
      const mk = Object.keys(val);
      if (mk.join() !== [...mk].sort().join()) problems.push(`${path}.${f.j}: map keys not sorted`);
    }
    if (isStruct(f.r)) {
      if (flags & SLICE && Array.isArray(val))
        val.forEach((x, i) => check(x, f.r!, `${path}.${f.j}[${i}]`, problems, given?.[i]));
      else if (flags & MAP && val && typeof val === 'object')
        for (const [k, x] of Object.entries(val))
          check(x, f.r!, `${path}.${f.j}[${k}]`, problems, given?.[k]);
      else check(val, f.r!, `${path}.${f.j}`, problems, given);
    }
  }
}

describe("codec/go-json: built-in objects as Go's encoding/json writes them", () => {
  const kinds = new Map<string, { apiVersion: string; kind: string; def: string }>();
  for (const r of resourceFacts()) {
    if (!r.definition || !defs()[r.definition]) continue;
    kinds.set(r.definition, {
      apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
      kind: r.kind,
      def: r.definition,
    });
  }

  it('covers every built-in kind the facts serve', () => {
    assert.ok(kinds.size > 60, `only ${kinds.size} kinds`);
  });

  it('writes every kind filled with every field in Go field order, maps sorted', () => {
    const problems: string[] = [];
    for (const { apiVersion, kind, def } of kinds.values()) {
      const obj = { ...filled(def, 0), apiVersion, kind };
      const out = goShapeObject(obj);
      check(out, def, kind, problems, obj);
      // Filled in reverse, written in Go order: the keys really moved.
      assert.notDeepEqual(Object.keys(out as object), Object.keys(obj), kind);
    }
    assert.deepEqual(problems.slice(0, 20), []);
  });

  it('writes every kind with only a name: omitempty zeros out, the rest as zeros', () => {
    const problems: string[] = [];
    for (const { apiVersion, kind, def } of kinds.values()) {
      const zeros = {
        apiVersion,
        kind,
        metadata: { name: 'x', labels: {}, finalizers: [] },
        spec: undefined,
      };
      check(goShapeObject(zeros), def, kind, problems, zeros);
    }
    assert.deepEqual(problems.slice(0, 20), []);
  });

  it('writes a bare Node and Pod condition byte for byte as Kubernetes does', () => {
    assert.equal(
      JSON.stringify(goShapeObject({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } })),
      '{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"},"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},' +
        '"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"",' +
        '"kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}',
    );
    const pod = goShapeObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
      status: { conditions: [{ status: 'True', type: 'Ready' }], phase: 'Running' },
    }) as any;
    assert.equal(
      JSON.stringify(pod.status),
      '{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":null}]}',
    );
    assert.equal(JSON.stringify(pod.spec.containers[0]), '{"name":"c","image":"i","resources":{}}');
  });

  it('writes custom resources as Go writes maps (keys sorted), keeps unknown keys of built-ins', () => {
    const cr = {
      kind: 'Thing',
      apiVersion: 'x.io/v1',
      metadata: { name: 'n', creationTimestamp: 't' },
      spec: { b: [{ d: 1, c: 2 }], a: 2 },
    };
    assert.equal(
      JSON.stringify(goShapeObject(cr)),
      '{"apiVersion":"x.io/v1","kind":"Thing","metadata":{"creationTimestamp":"t","name":"n"},"spec":{"a":2,"b":[{"c":2,"d":1}]}}',
    );
    // meta.k8s.io kinds are metav1 structs: a nil slice without omitempty is written null.
    const table = { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: {}, rows: [] };
    assert.equal(
      JSON.stringify(goShapeObject(table)),
      '{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"columnDefinitions":null,"rows":[]}',
    );
    const cm = goShapeObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      extra: 1,
    }) as any;
    assert.deepEqual(Object.keys(cm), ['kind', 'apiVersion', 'metadata', 'extra']);
  });

  it('tells the Protobuf decoder which zeros Go would drop: non-pointer omitempty, never pointers', () => {
    assert.equal(omittedWhenZero('k8s.io.api.core.v1.PersistentVolumeClaimSpec', 'volumeName'), true);
    assert.equal(omittedWhenZero('k8s.io.api.apps.v1.DeploymentSpec', 'minReadySeconds'), true);
    assert.equal(omittedWhenZero('k8s.io.api.apps.v1.DeploymentSpec', 'replicas'), false);
    assert.equal(omittedWhenZero('k8s.io.api.core.v1.ServicePort', 'port'), false);
    assert.equal(omittedWhenZero('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'name'), true);
    assert.equal(
      omittedWhenZero(
        'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec',
        'preserveUnknownFields',
      ),
      true,
    );
    assert.equal(
      omittedWhenZero(
        'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceSpec',
        'insecureSkipTLSVerify',
      ),
      true,
    );
  });

  it("escapes <, > and & and the line separators as Go's encoder does", () => {
    const v = { a: '<b>&c\u2028\u2029', 'k<': 1 };
    const text = goJSONText(v);
    assert.equal(text, '{"a":"\\u003cb\\u003e\\u0026c\\u2028\\u2029","k\\u003c":1}');
    assert.deepEqual(JSON.parse(text), v);
    assert.equal(goJSONText({ plain: 'x' }), '{"plain":"x"}');
    // Each character alone is found, in one-byte and two-byte strings.
    for (const [c, esc] of [
      ['<', '\\u003c'],
      ['>', '\\u003e'],
      ['&', '\\u0026'],
      ['\u2028', '\\u2028'],
      ['\u2029', '\\u2029'],
    ]) {
      assert.equal(goJSONText(`a${c}b`), `"a${esc}b"`);
      assert.equal(goJSONText(`é${c}€`), `"é${esc}€"`);
    }
    assert.equal(goJSONText(undefined), undefined);
  });
});
