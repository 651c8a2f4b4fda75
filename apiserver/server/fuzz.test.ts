// 10,000 malformed requests against one server: bad JSON, truncated bodies,
// huge headers, bad selectors and resourceVersions, wrong types in fields,
// random paths and methods, bad content types, bad patches, random bytes as
// Protobuf. Every answer must be a 4xx (a Status for API paths) or a success,
// never a 5xx or a hang, and the server must still be ready afterwards.
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { startTestAPIServer, type TestAPIServer } from './testing';
import { encodeObject as encodeProtobuf } from '../../shared/codec/protobuf';
import { toYAML } from '../../shared/codec/yaml';

/** A small deterministic PRNG (mulberry32) so failures can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256))),
  };
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

const RESOURCES = [
  '/api/v1/namespaces/default/pods',
  '/api/v1/namespaces/default/configmaps',
  '/api/v1/namespaces/default/secrets',
  '/api/v1/namespaces/default/services',
  '/api/v1/namespaces',
  '/api/v1/nodes',
  '/apis/apps/v1/namespaces/default/deployments',
  '/apis/batch/v1/namespaces/default/jobs',
  '/apis/coordination.k8s.io/v1/namespaces/default/leases',
  '/apis/events.k8s.io/v1/namespaces/default/events',
  '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
];

const SAMPLES: Record<string, any> = {
  pods: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { a: 'b' } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'nginx',
          ports: [{ containerPort: 80 }],
          resources: { requests: { cpu: '100m' } },
        },
      ],
    },
  },
  configmaps: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } },
  secrets: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'YQ==' }, type: 'Opaque' },
  services: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc' },
    spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { a: 'b' } },
  },
  namespaces: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } },
  nodes: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node' }, spec: { podCIDR: '10.0.0.0/24' } },
  deployments: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  },
  jobs: {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
  },
  leases: {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l' },
    spec: { holderIdentity: 'x', leaseDurationSeconds: 10 },
  },
  events: {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e' },
    eventTime: '2026-01-01T00:00:00.000000Z',
    reportingController: 'x/y',
    reportingInstance: 'i',
    action: 'A',
    reason: 'R',
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'p' },
  },
  clusterroles: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'cr' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  },
  validatingwebhookconfigurations: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'v' },
    webhooks: [],
  },
};

const WRONG_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -2147483649,
  '9007199254740993',
  '',
  'x',
  '💥',
  '\u0000',
  [],
  [1, 'a'],
  {},
  { a: { b: {} } },
  'a'.repeat(70000),
  [[[[[]]]]],
  { $ref: 'x' },
  '2026-13-45T99:99:99Z',
  '-1Gi',
  '1e1000',
];

const BAD_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/json; charset=utf-16',
  'application/vnd.kubernetes.protobuf',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/yaml',
  'multipart/form-data; boundary=x',
  ';;;',
  '',
  'application/vnd.kubernetes.protobuf;stream=watch',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
];

const QUERIES = [
  'labelSelector=!!!',
  'labelSelector=a%20in%20(',
  'labelSelector=a=b=c',
  'labelSelector=' + 'a'.repeat(300) + '=b',
  'fieldSelector=spec.nope=x',
  'fieldSelector=metadata.name==',
  'fieldSelector=,,,',
  'fieldSelector=status.phase!=',
  'resourceVersion=abc',
  'resourceVersion=-1',
  'resourceVersion=1.5',
  'resourceVersion=0x10',
  'resourceVersion=%00',
  'resourceVersionMatch=Exact',
  'resourceVersionMatch=Bogus&resourceVersion=1',
  'resourceVersionMatch=NotOlderThan',
  'limit=-5',
  'limit=abc',
  'limit=1&continue=bogus',
  'continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiXHUwMDAwIn0',
  'timeoutSeconds=abc',
  'timeout=-1s',
  'timeout=zz',
  'watch=maybe&timeoutSeconds=1',
  'watch=FaLsE',
  'limit=99999999999999999999',
  'gracePeriodSeconds=-99999999999999999999',
  'timeoutSeconds=99999999999999999999&watch=1',
  'timeout=9999999999h',
  'watch=true&resourceVersion=abc',
  'dryRun=Some',
  'dryRun=All&dryRun=None',
  'fieldManager=' + 'x'.repeat(200),
  'fieldManager=%7F',
  'fieldValidation=Nope',
  'pretty=%ZZ',
  'propagationPolicy=Sideways',
  'gracePeriodSeconds=abc',
  'orphanDependents=true&propagationPolicy=Orphan',
  'allowWatchBookmarks=yes&watch=1&timeoutSeconds=1',
  'sendInitialEvents=true',
  'force=true',
  'includeObject=Bogus',
  'a=%E0%A4%A',
  '%%%',
  '&&&=&',
  'labelSelector=%FF%FE',
];

function mutate(obj: any, r: ReturnType<typeof rng>): any {
  const copy = JSON.parse(JSON.stringify(obj));
  const paths: any[][] = [];
  const walk = (o: any, p: any[]) => {
    if (o && typeof o === 'object') {
      for (const k of Object.keys(o)) {
        paths.push([...p, k]);
        walk(o[k], [...p, k]);
      }
    }
  };
  walk(copy, []);
  const n = 1 + r.int(3);
  for (let i = 0; i < n && paths.length; i++) {
    const p = r.pick(paths);
    let t = copy;
    for (const k of p.slice(0, -1)) {
      if (!t || typeof t !== 'object') break;
      t = t[k];
    }
    // A copy: a later mutation may walk into the value and must not change the shared sample.
    if (t && typeof t === 'object') t[p[p.length - 1]] = structuredClone(r.pick(WRONG_VALUES));
  }
  if (copy?.metadata && typeof copy.metadata === 'object' && r.int(2)) copy.metadata.name = `fz${r.int(1e9)}`;
  return copy;
}

function generate(r: ReturnType<typeof rng>, i: number): FuzzRequest {
  const base = r.pick(RESOURCES);
  const resource = base.split('/').pop()!;
  const sample = SAMPLES[resource];
  const kind = i % 14;
  const json = { 'content-type': 'application/json' };
  switch (kind) {
    case 0: {
      const text = JSON.stringify(mutate(sample, r));
      const cut = r.int(text.length);
      return {
        method: 'POST',
        path: base,
        headers: json,
        body: text.slice(0, cut) + r.pick(['', '}', ']', ',', '"', '\\', '{{']),
      };
    }
    case 1:
      return {
        method: r.pick(['POST', 'PUT']),
        path: r.int(2) ? base : `${base}/${sample.metadata.name}`,
        headers: json,
        body: JSON.stringify(mutate(sample, r)),
      };
    case 2:
      return { method: 'GET', path: `${base}?${r.pick(QUERIES)}&${r.pick(QUERIES)}`, headers: {} };
    case 3:
      return {
        method: r.pick(['POST', 'PUT', 'PATCH']),
        path: `${base}${r.int(2) ? '' : '/' + sample.metadata.name}`,
        headers: { 'content-type': r.pick(BAD_CONTENT_TYPES) },
        body: r.int(2) ? JSON.stringify(sample) : r.bytes(r.int(200)),
      };
    case 4:
      return {
        method: 'POST',
        path: base,
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body: r.int(3)
          ? Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), r.bytes(r.int(300))])
          : r.bytes(r.int(300)),
      };
    case 5: {
      const patches = [
        '[{"op":"nope","path":"/x"}]',
        '[{"op":"add"}]',
        '[{"op":"remove","path":"/metadata/zzz"}]',
        '{"not":"a list"}',
        '[{"op":"replace","path":"/spec/containers/99/image","value":1}]',
        '[{"op":"test","path":"/metadata/name","value":"zz"}]',
        '[{"op":"move","from":"/a","path":"/b"}]',
        '[{"op":"copy","from":"/metadata","path":"/metadata/labels/x"}]',
        '"string"',
        'null',
        '[]',
        '[' + '{"op":"add","path":"/metadata/labels/a","value":"b"},'.repeat(50) + '{}]',
      ];
      const merges = [
        '[1,2]',
        '"x"',
        '{"metadata":null}',
        '{"spec":{"containers":"x"}}',
        '{"metadata":{"name":7}}',
        '{"$patch":"delete"}',
        '{"spec":{"$setElementOrder/containers":[{"x":1}]}}',
        '{"metadata":{"$retainKeys":1}}',
      ];
      const applies = [
        '::::',
        'apiVersion: [',
        'kind: 7',
        '{}',
        'metadata: {managedFields: [{}]}',
        '- a\n- b',
        '\t\tx: y',
      ];
      const type = r.pick([
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
        'application/apply-patch+yaml',
      ]);
      const body =
        type === 'application/json-patch+json'
          ? r.pick(patches)
          : type === 'application/apply-patch+yaml'
            ? r.pick(applies)
            : r.int(2)
              ? r.pick(merges)
              : JSON.stringify(mutate(sample, r));
      const q =
        type === 'application/apply-patch+yaml'
          ? `?fieldManager=${r.pick(['fz', '', '%00'])}&force=${r.pick(['true', 'x'])}`
          : '';
      return {
        method: 'PATCH',
        path: `${base}/${r.pick([sample.metadata.name, 'missing', 'fz'])}${q}`,
        headers: { 'content-type': type },
        body,
      };
    }
    case 6: {
      const segs = [
        'api',
        'apis',
        'v1',
        'namespaces',
        'default',
        'pods',
        'status',
        'log',
        'exec',
        '..',
        '%2e%2e',
        '',
        'x'.repeat(300),
        '%00',
        '\u00e9',
        'watch',
        'proxy',
        'scale',
        'binding',
        'eviction',
        'openapi',
        'v2',
        'v3',
        'version',
        'healthz',
        'readyz',
        'livez',
        'metrics',
        '{',
        '*',
      ];
      const n = 1 + r.int(8);
      const path = '/' + Array.from({ length: n }, () => r.pick(segs)).join('/');
      const method = r.pick([
        'GET',
        'POST',
        'PUT',
        'PATCH',
        'DELETE',
        'HEAD',
        'OPTIONS',
        'TRACE',
        'PROPFIND',
        'CONNECT',
      ]);
      return {
        method: method === 'CONNECT' ? 'GET' : method,
        path: encodeURI(path).replace(/%25/g, '%'),
        headers: method === 'GET' ? {} : json,
        body: method === 'GET' || method === 'HEAD' ? undefined : r.pick(['{}', '', 'x', '[]']),
      };
    }
    case 7:
      return {
        method: 'GET',
        path: base,
        headers: {
          [r.pick(['x-huge', 'accept', 'impersonate-user', 'user-agent', 'authorization', 'audit-id'])]:
            'a'.repeat(r.pick([100, 4000, 12000, 20000])),
        },
      };
    case 8:
      return {
        method: 'GET',
        path: base,
        headers: {
          accept: r.pick([
            'application/xml',
            'application/json;as=Table;g=x;v=y',
            'application/json;as=Bogus',
            '*/*;q=abc',
            'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io',
            ';;',
            'application/json;stream=watch',
          ]),
        },
      };
    case 9: {
      const body = r.pick([
        '{"kind":"DeleteOptions","gracePeriodSeconds":"x"}',
        '{"propagationPolicy":7}',
        '{"preconditions":"x"}',
        '{"dryRun":"All"}',
        '[]',
        '{',
        '{"kind":"Pod"}',
        '{"gracePeriodSeconds":-5,"orphanDependents":"yes"}',
      ]);
      return {
        method: 'DELETE',
        path: `${base}${r.int(3) ? '/' + r.pick([sample.metadata.name, 'missing']) : ''}?${r.pick(QUERIES)}`,
        headers: json,
        body,
      };
    }
    case 10:
      return { method: 'POST', path: base, headers: json, body: JSON.stringify(r.pick(WRONG_VALUES)) };
    case 12: {
      // YAML: alias bombs, expansions past the bound, deep block nesting, mutated objects.
      const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
      for (let l = 1; l < 9; l++)
        bomb.push(
          `${'abcdefghi'[l]}: &${'abcdefghi'[l]} [${Array(9)
            .fill('*' + 'abcdefghi'[l - 1])
            .join(',')}]`,
        );
      const body = r.pick([
        bomb.join('\n'),
        `metadata: {name: x}\nbig: &b "${'y'.repeat(100_000)}"\nmore: [${Array(400).fill('*b').join(',')}]`,
        '- '.repeat(1 + r.int(50_000)) + 'x',
        '? '.repeat(1 + r.int(50_000)) + 'x',
        'a: &a [*a]',
        '*nope',
        toYAML(mutate(sample, r)),
        toYAML(sample).slice(0, r.int(200)),
        '%YAML 9.9\n---\n' + toYAML(sample),
      ]);
      return {
        method: r.pick(['POST', 'PUT', 'PATCH']),
        path: r.pick([base, `${base}/${sample.metadata.name}`]),
        headers: {
          'content-type': r.pick([
            'application/yaml',
            'application/apply-patch+yaml',
            'application/merge-patch+json',
          ]),
        },
        body,
      };
    }
    case 13: {
      // A valid Protobuf envelope of the sample with a few bytes flipped, cut or grown.
      let pb: Buffer;
      try {
        pb = Buffer.from(encodeProtobuf(mutate(sample, r)));
      } catch {
        pb = Buffer.from(encodeProtobuf(sample)); // a mutation the encoder itself refuses
      }
      for (let n = r.int(4); n > 0; n--) pb[4 + r.int(pb.length - 4)] = r.int(256);
      const body = r.int(3) ? pb : pb.subarray(0, 4 + r.int(pb.length - 4));
      return {
        method: r.pick(['POST', 'PUT']),
        path: r.pick([base, `${base}/${sample.metadata.name}`]),
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body: r.int(5) ? body : Buffer.concat([body, r.bytes(r.int(40))]),
      };
    }
    default: {
      const deep = '['.repeat(r.pick([10, 1000, 20000])) + ']'.repeat(r.int(2) ? 0 : 10);
      return {
        method: r.pick(['POST', 'PUT']),
        path: r.pick([base, `${base}/${sample.metadata.name}`]),
        headers: { 'content-type': r.pick(['application/json', 'application/yaml']) },
        body: r.int(2) ? deep : `{"metadata":${deep}}`,
      };
    }
  }
}

describe('fuzz: malformed requests', function () {
  this.timeout(300_000);
  let srv: TestAPIServer;
  let dispatcher: Agent;

  before(async () => {
    srv = await startTestAPIServer({ disableAdmissionPlugins: [] });
    const c = srv.config;
    dispatcher = new Agent({
      connect: { ca: c.caPem, cert: c.certPem, key: c.keyPem, rejectUnauthorized: true },
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
      connections: 32,
    });
  });
  after(async () => {
    await dispatcher.close();
    await srv.stop();
  });

  it('answers 10,000 malformed requests without a 5xx, a hang or a crash', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? 20261122);
    const total = Number(process.env.FUZZ_COUNT ?? 10_000);
    const r = rng(seed);
    const failures: string[] = [];
    const counts = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        const i = next++;
        const req = generate(r, i);
        const describe = () =>
          `#${i} ${req.method} ${req.path.slice(0, 200)} ${JSON.stringify(req.headers).slice(0, 200)} body=${String(req.body ?? '').slice(0, 200)}`;
        // FUZZ_TRACE=file records each request before it is sent (with FUZZ_JOBS=1, the last line is the culprit of a crash).
        if (process.env.FUZZ_TRACE) appendFileSync(process.env.FUZZ_TRACE, describe() + '\n');
        try {
          const res = await request(srv.url + req.path, {
            method: req.method as any,
            dispatcher,
            headers: req.headers,
            body: req.body,
          });
          const body = Buffer.from(await res.body.arrayBuffer());
          counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1);
          // Kubernetes answers an unclassified strategic-merge error as a 500 with reason "" (ErrorToAPIStatus).
          const faithful5xx =
            res.statusCode === 500 && /"reason":"",.*"code":500/.test(body.toString('utf8'));
          if (res.statusCode >= 500 && !faithful5xx)
            failures.push(`${describe()} -> ${res.statusCode} ${body.toString('utf8').slice(0, 300)}`);
          else if (
            res.statusCode >= 400 &&
            res.statusCode !== 431 &&
            req.path.startsWith('/api') &&
            req.method !== 'HEAD'
          ) {
            const ct = String(res.headers['content-type'] ?? '');
            if (ct.startsWith('application/json')) {
              let kind: string | undefined;
              try {
                kind = JSON.parse(body.toString('utf8')).kind;
              } catch {
                kind = undefined;
              }
              if (kind !== 'Status')
                failures.push(
                  `${describe()} -> ${res.statusCode} not a Status: ${body.toString('utf8').slice(0, 200)}`,
                );
            }
          }
        } catch (err) {
          const code = (err as any)?.code;
          // A header block over Node's limit is refused at the socket (431, connection closed).
          if (
            req.headers &&
            Object.values(req.headers).some((v) => v.length > 8000) &&
            code === 'UND_ERR_SOCKET'
          )
            continue;
          failures.push(`${describe()} -> client error ${code ?? ''} ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Number(process.env.FUZZ_JOBS ?? 32) }, worker));
    if (process.env.FUZZ_REPORT) appendFileSync(process.env.FUZZ_REPORT, failures.join('\n') + '\n');
    const summary = [...counts]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${k}:${v}`)
      .join(' ');
    assert.deepEqual(failures.slice(0, 20), [], `status counts ${summary}; ${failures.length} failures`);
    const ready = await request(`${srv.url}/readyz`, { dispatcher });
    assert.equal(ready.statusCode, 200);
    await ready.body.arrayBuffer();
  });
});
