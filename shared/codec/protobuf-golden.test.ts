// Golden bytes built by hand from the field numbers in the facts (proto.json),
// not through the codec's plan, so the numbers and the layout are really checked.
import assert from 'node:assert/strict';
import { allProtoMessages } from '../api/schema';
import { decodeObject, encodeObject, ProtobufError } from './protobuf';

const num = (message: string, field: string): number => {
  const f = allProtoMessages()[message]?.fields.find((x) => x.name === field);
  if (!f) throw new Error(`no ${message}.${field} in proto.json`);
  return f.n;
};

const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const RUNTIME = 'k8s.io.apimachinery.pkg.runtime';
const INTSTR = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';

type Bytes = number[];
const varint = (v: number): Bytes => {
  const out: Bytes = [];
  let x = BigInt.asUintN(64, BigInt(v));
  while (x > 127n) {
    out.push(Number(x & 127n) | 128);
    x >>= 7n;
  }
  out.push(Number(x));
  return out;
};
type Field = [number, Bytes];
const vint = (n: number, v: number): Field => [n, [...varint(n * 8), ...varint(v)]];
const ld = (n: number, b: Bytes): Field => [n, [...varint(n * 8 + 2), ...varint(b.length), ...b]];
const str = (n: number, s: string): Field => ld(n, [...Buffer.from(s, 'utf8')]);
/** A message: fields in field-number order (stable for repeated ones). */
const msg = (...fields: Field[]): Bytes => [...fields].sort((a, b) => a[0] - b[0]).flatMap((f) => f[1]);
const mapEntry = (n: number, k: string, v: string): Field => ld(n, msg(str(1, k), str(2, v)));

function envelope(apiVersion: string, kind: string, raw: Bytes): Buffer {
  const U = `${RUNTIME}.Unknown`;
  const TM = `${RUNTIME}.TypeMeta`;
  return Buffer.from([
    0x6b,
    0x38,
    0x73,
    0x00,
    ...msg(
      ld(num(U, 'typeMeta'), msg(str(num(TM, 'apiVersion'), apiVersion), str(num(TM, 'kind'), kind))),
      ld(num(U, 'raw'), raw),
      str(num(U, 'contentEncoding'), ''),
      str(num(U, 'contentType'), ''),
    ),
  ]);
}

const time = (seconds: number) =>
  msg(vint(num(`${META}.Time`, 'seconds'), seconds), vint(num(`${META}.Time`, 'nanos'), 0));

describe('protobuf codec: golden bytes from the facts', () => {
  const OM = `${META}.ObjectMeta`;

  it('a small Pod (labels, time, via-flattened probe handler, int-or-string)', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web',
        namespace: 'default',
        labels: { tier: 'front', app: 'web' },
        creationTimestamp: '2024-05-01T10:00:00Z',
      },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.25',
            ports: [{ containerPort: 80 }],
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: 80 } },
          },
        ],
      },
    };
    const port = (v: number | string) =>
      typeof v === 'number'
        ? msg(vint(num(INTSTR, 'type'), 0), vint(num(INTSTR, 'intVal'), v), str(num(INTSTR, 'strVal'), ''))
        : msg(vint(num(INTSTR, 'type'), 1), vint(num(INTSTR, 'intVal'), 0), str(num(INTSTR, 'strVal'), v));
    const P = `${CORE}.Probe`;
    const H = `${CORE}.ProbeHandler`;
    const container = msg(
      str(num(`${CORE}.Container`, 'name'), 'nginx'),
      str(num(`${CORE}.Container`, 'image'), 'nginx:1.25'),
      ld(num(`${CORE}.Container`, 'ports'), msg(vint(num(`${CORE}.ContainerPort`, 'containerPort'), 80))),
      ld(
        num(`${CORE}.Container`, 'readinessProbe'),
        msg(
          ld(
            num(P, 'handler'),
            msg(
              ld(
                num(H, 'httpGet'),
                msg(
                  str(num(`${CORE}.HTTPGetAction`, 'path'), '/'),
                  ld(num(`${CORE}.HTTPGetAction`, 'port'), port('http')),
                ),
              ),
            ),
          ),
          vint(num(P, 'periodSeconds'), 5),
        ),
      ),
      ld(
        num(`${CORE}.Container`, 'livenessProbe'),
        msg(
          ld(
            num(P, 'handler'),
            msg(ld(num(H, 'tcpSocket'), msg(ld(num(`${CORE}.TCPSocketAction`, 'port'), port(80))))),
          ),
        ),
      ),
    );
    const raw = msg(
      ld(
        num(`${CORE}.Pod`, 'metadata'),
        msg(
          str(num(OM, 'name'), 'web'),
          str(num(OM, 'namespace'), 'default'),
          ld(num(OM, 'creationTimestamp'), time(1714557600)),
          mapEntry(num(OM, 'labels'), 'app', 'web'), // sorted: app before tier
          mapEntry(num(OM, 'labels'), 'tier', 'front'),
        ),
      ),
      ld(num(`${CORE}.Pod`, 'spec'), msg(ld(num(`${CORE}.PodSpec`, 'containers'), container))),
    );
    const expected = envelope('v1', 'Pod', raw);
    const got = encodeObject(pod);
    assert.equal(got.toString('hex'), expected.toString('hex'));
    assert.deepStrictEqual(decodeObject(expected), pod);
    // The opening bytes every Kubernetes client sees for a v1 Pod, and the closing "1a 00 22 00".
    assert.equal(got.subarray(0, 15).toString('hex'), '6b3873000a090a0276311203506f64');
    assert.equal(got.subarray(-4).toString('hex'), '1a002200');
  });

  it('a ConfigMap list: bare items, list kind in typeMeta', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '5', continue: 'next' },
      items: [
        { metadata: { name: 'a' }, data: { k: 'v' } },
        {
          metadata: { name: 'b' },
          binaryData: { bin: Buffer.from([0, 1, 255]).toString('base64') },
          immutable: true,
        },
      ],
    };
    const CM = `${CORE}.ConfigMap`;
    const LM = `${META}.ListMeta`;
    const raw = msg(
      ld(
        num(`${CORE}.ConfigMapList`, 'metadata'),
        msg(str(num(LM, 'resourceVersion'), '5'), str(num(LM, 'continue'), 'next')),
      ),
      ld(
        num(`${CORE}.ConfigMapList`, 'items'),
        msg(ld(num(CM, 'metadata'), msg(str(num(OM, 'name'), 'a'))), mapEntry(num(CM, 'data'), 'k', 'v')),
      ),
      ld(
        num(`${CORE}.ConfigMapList`, 'items'),
        msg(
          ld(num(CM, 'metadata'), msg(str(num(OM, 'name'), 'b'))),
          ld(num(CM, 'binaryData'), msg(str(1, 'bin'), ld(2, [0, 1, 255]))),
          vint(num(CM, 'immutable'), 1),
        ),
      ),
    );
    const expected = envelope('v1', 'ConfigMapList', raw);
    assert.equal(encodeObject(list).toString('hex'), expected.toString('hex'));
    assert.deepStrictEqual(decodeObject(expected), list);
  });

  it('a Status error', () => {
    const status = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', field: 'spec' }] },
      code: 404,
    };
    const S = `${META}.Status`;
    const D = `${META}.StatusDetails`;
    const C = `${META}.StatusCause`;
    const raw = msg(
      ld(num(S, 'metadata'), []),
      str(num(S, 'status'), 'Failure'),
      str(num(S, 'message'), 'pods "x" not found'),
      str(num(S, 'reason'), 'NotFound'),
      ld(
        num(S, 'details'),
        msg(
          str(num(D, 'name'), 'x'),
          str(num(D, 'kind'), 'pods'),
          ld(num(D, 'causes'), msg(str(num(C, 'reason'), 'FieldValueInvalid'), str(num(C, 'field'), 'spec'))),
        ),
      ),
      vint(num(S, 'code'), 404),
    );
    const expected = envelope('v1', 'Status', raw);
    assert.equal(encodeObject(status).toString('hex'), expected.toString('hex'));
    assert.deepStrictEqual(decodeObject(expected), status);
  });

  it('checks the magic prefix', () => {
    const good = encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    for (const prefix of [
      [0x6b, 0x38, 0x73, 0x01],
      [0x6b, 0x38, 0x73],
      [0x00, 0x38, 0x73, 0x00],
    ]) {
      const bad = Buffer.concat([Buffer.from(prefix), good.subarray(4)]);
      assert.throws(() => decodeObject(bad), ProtobufError);
    }
    assert.throws(() => decodeObject(Buffer.alloc(0)), /k8s\\0/);
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Pod"}')), ProtobufError);
    assert.equal(decodeObject(good).metadata.name, 'n');
  });
});

describe('protobuf codec: what Go sends', () => {
  const OM = `${META}.ObjectMeta`;

  it('zero values of non-pointer omitempty fields dropped as in the JSON of Go, empty Time, both IntOrString alternatives', () => {
    const S = `${CORE}.Service`;
    const SP = `${CORE}.ServiceSpec`;
    const PORT = `${CORE}.ServicePort`;
    const ios = (type: number, i: number, s: string) =>
      msg(vint(num(INTSTR, 'type'), type), vint(num(INTSTR, 'intVal'), i), str(num(INTSTR, 'strVal'), s));
    const raw = msg(
      ld(
        num(S, 'metadata'),
        msg(
          str(num(OM, 'name'), 'svc'),
          str(num(OM, 'generateName'), ''),
          str(num(OM, 'namespace'), ''),
          vint(num(OM, 'generation'), 0),
          ld(num(OM, 'creationTimestamp'), []), // Go's zero time: an empty message
        ),
      ),
      ld(
        num(S, 'spec'),
        msg(
          ld(
            num(SP, 'ports'),
            msg(str(num(PORT, 'name'), 'a'), ld(num(PORT, 'targetPort'), ios(0, 8080, ''))),
          ),
          ld(
            num(SP, 'ports'),
            msg(str(num(PORT, 'name'), 'b'), ld(num(PORT, 'targetPort'), ios(1, 0, 'http'))),
          ),
          str(num(SP, 'type'), ''),
        ),
      ),
      ld(num(S, 'status'), []),
    );
    assert.deepStrictEqual(decodeObject(envelope('v1', 'Service', raw)), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc', creationTimestamp: null },
      spec: {
        ports: [
          { name: 'a', targetPort: 8080 },
          { name: 'b', targetPort: 'http' },
        ],
      },
      status: {},
    });
  });

  it('skips unknown fields of every wire type (e.g. 1.20 clusterName = 15)', () => {
    const unknown: Field[] = [
      str(15, ''),
      vint(999, 2 ** 40),
      [1000, [...varint(1000 * 8 + 1), 1, 2, 3, 4, 5, 6, 7, 8]],
      [1001, [...varint(1001 * 8 + 5), 1, 2, 3, 4]],
      ld(1002, msg(str(1, 'nested'), vint(2, -1))),
    ];
    const raw = msg(
      ld(num(`${CORE}.ConfigMap`, 'metadata'), msg(str(num(OM, 'name'), 'cm'), ...unknown)),
      ...unknown.slice(1),
    );
    assert.deepStrictEqual(decodeObject(envelope('v1', 'ConfigMap', raw)), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
    });
  });

  it('accepts packed repeated numbers and out-of-order fields', () => {
    const PSC = `${CORE}.PodSecurityContext`;
    const groups = [1, 2, 2 ** 40];
    const packed = ld(num(PSC, 'supplementalGroups'), groups.flatMap(varint));
    const spec = msg(ld(num(`${CORE}.PodSpec`, 'securityContext'), packed[1]));
    // metadata after spec: decoders must not depend on order
    const raw = [
      ...ld(num(`${CORE}.Pod`, 'spec'), spec)[1],
      ...ld(num(`${CORE}.Pod`, 'metadata'), msg(str(1, 'p')))[1],
    ];
    const pod = decodeObject(envelope('v1', 'Pod', raw));
    assert.deepStrictEqual(pod.spec.securityContext.supplementalGroups, groups);
    assert.equal(pod.metadata.name, 'p');
  });

  it('a message seen twice is merged: singular fields take the later value, repeated ones append', () => {
    const raw = msg(
      ld(
        num(`${CORE}.ConfigMap`, 'metadata'),
        msg(str(num(OM, 'name'), 'first'), str(num(OM, 'name'), 'second')),
      ),
      ld(
        num(`${CORE}.ConfigMap`, 'metadata'),
        msg(str(num(OM, 'finalizers'), 'a'), str(num(OM, 'finalizers'), 'b')),
      ),
    );
    const cm = decodeObject(envelope('v1', 'ConfigMap', raw));
    assert.deepStrictEqual(cm.metadata, { name: 'second', finalizers: ['a', 'b'] });
  });
});
