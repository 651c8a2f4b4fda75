// x-kubernetes-validations end to end over real HTTPS with the
// CustomResourceValidationExpressions gate on: rules compiled at CRD
// creation, evaluated on custom resource writes with Kubernetes' messages.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { type API, CRDS, crd, establish, until } from './test-support';

const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.minReplicas <= self.replicas', message: 'replicas must be at least minReplicas' },
        {
          rule: "!has(self.mode) || self.mode != 'off' || self.replicas == 0",
          messageExpression: "'replicas is ' + string(self.replicas) + ' while mode is off'",
          reason: 'FieldValueForbidden',
          fieldPath: '.replicas',
        },
        { rule: "!has(self.ports) || self.ports.all(p, p.name != 'admin')", message: 'no admin port' },
        {
          rule: 'self.minReplicas <= 1000',
          messageExpression: "'minReplicas %d is above the limit of %d'.format([self.minReplicas, 1000])",
        },
      ],
      properties: {
        replicas: { type: 'integer' },
        minReplicas: { type: 'integer' },
        mode: { type: 'string' },
        'class-name': {
          type: 'string',
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'class-name is immutable' }],
        },
        limit: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: 'quantity(self).isLessThan(quantity("2Gi"))' }],
        },
        ports: {
          type: 'array',
          maxItems: 8,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', maxLength: 10 }, port: { type: 'integer' } },
            'x-kubernetes-validations': [
              { rule: 'self.port > 0 && self.port < 65536', message: 'port out of range' },
              {
                rule: '!oldSelf.hasValue() || oldSelf.value().port <= self.port',
                optionalOldSelf: true,
                message: 'ports only grow',
              },
            ],
          },
        },
      },
    },
  },
};

const PATH = '/apis/rules.example.com/v1/namespaces/default/widgets';
const widget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'rules.example.com/v1',
  kind: 'Widget',
  metadata: { name },
  spec,
});
const warningsOf = (r: { headers: Record<string, string | string[] | undefined> }): string[] =>
  r.headers.warning === undefined ? [] : [r.headers.warning].flat();

describe('CRD validation rules (x-kubernetes-validations)', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: API;

  before(async () => {
    srv = await startTestAPIServer({ featureGates: { CustomResourceValidationExpressions: 'true' } });
    api = testRequester(srv.config);
    await establish(
      api,
      crd({
        group: 'rules.example.com',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: SCHEMA },
            subresources: { status: {} },
          },
        ],
      }),
    );
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
  });

  it('refuses a custom resource breaking a cross-field rule with 422 and the rule message', async () => {
    const r = await api('POST', PATH, { body: widget('low', { replicas: 1, minReplicas: 3 }) });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(
      r.json.message,
      'Widget.rules.example.com "low" is invalid: spec: Invalid value: "object": replicas must be at least minReplicas',
    );
    assert.deepEqual(r.json.details.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "object": replicas must be at least minReplicas',
        field: 'spec',
      },
    ]);
    const ok = await api('POST', PATH, { body: widget('fine', { replicas: 3, minReplicas: 1 }) });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
  });

  it('renders messageExpression, and reason and fieldPath shape the error', async () => {
    const r = await api('POST', PATH, { body: widget('off', { replicas: 2, minReplicas: 0, mode: 'off' }) });
    assert.equal(r.status, 422);
    assert.match(r.json.message, /spec\.replicas: Forbidden: replicas is 2 while mode is off$/);
  });

  it('renders a messageExpression written with string.format', async () => {
    const r = await api('POST', PATH, { body: widget('big', { replicas: 2000, minReplicas: 1500 }) });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(
      r.json.message,
      'Widget.rules.example.com "big" is invalid: spec: Invalid value: "object": minReplicas 1500 is above the limit of 1000',
    );
  });

  it('makes a field immutable with self == oldSelf (escaped property names)', async () => {
    const created = await api('POST', PATH, {
      body: widget('imm', { replicas: 1, minReplicas: 1, 'class-name': 'a' }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const cur = created.json;
    cur.spec['class-name'] = 'b';
    const r = await api('PUT', `${PATH}/imm`, { body: cur });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.match(r.json.message, /spec\.class-name: Invalid value: "string": class-name is immutable/);
    cur.spec['class-name'] = 'a';
    cur.spec.replicas = 2;
    assert.equal((await api('PUT', `${PATH}/imm`, { body: cur })).status, 200);
  });

  it('runs rules on list items with optionalOldSelf transition rules correlated by map keys', async () => {
    const bad = await api('POST', PATH, {
      body: widget('p0', { replicas: 1, minReplicas: 1, ports: [{ name: 'http', port: 0 }] }),
    });
    assert.equal(bad.status, 422);
    assert.match(bad.json.message, /spec\.ports\[0\]: Invalid value: "object": port out of range/);
    const c = await api('POST', PATH, {
      body: widget('p1', { replicas: 1, minReplicas: 1, ports: [{ name: 'http', port: 80 }] }),
    });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const cur = c.json;
    cur.spec.ports = [
      { name: 'https', port: 1 },
      { name: 'http', port: 79 },
    ];
    const r = await api('PUT', `${PATH}/p1`, { body: cur });
    assert.equal(r.status, 422);
    assert.match(r.json.message, /spec\.ports\[1\]: Invalid value: "object": ports only grow/);
    assert.doesNotMatch(r.json.message, /ports\[0\]/);
    const admin = await api('POST', PATH, {
      body: widget('p2', { replicas: 1, minReplicas: 1, ports: [{ name: 'admin', port: 1 }] }),
    });
    assert.equal(admin.status, 422);
    assert.match(admin.json.message, /spec: Invalid value: "object": no admin port/);
  });

  it('uses the Kubernetes libraries (quantity)', async () => {
    const r = await api('POST', PATH, { body: widget('q', { replicas: 1, minReplicas: 1, limit: '3Gi' }) });
    assert.equal(r.status, 422);
    assert.match(
      r.json.message,
      /spec\.limit: Invalid value: "string": failed rule: quantity\(self\)\.isLessThan/,
    );
    assert.equal(
      (await api('POST', PATH, { body: widget('q2', { replicas: 1, minReplicas: 1, limit: '1Gi' }) })).status,
      201,
    );
  });

  it('ratchets: a value stored before its rule existed may stay while other fields change', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 64 }, size: { type: 'integer' } },
        },
      },
    };
    const obj = await establish(
      api,
      crd({
        group: 'ratchet.example.com',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      }),
    );
    const base = '/apis/ratchet.example.com/v1/namespaces/default/widgets';
    const w = (name: string, spec: unknown) => ({
      apiVersion: 'ratchet.example.com/v1',
      kind: 'Widget',
      metadata: { name },
      spec,
    });
    assert.equal((await api('POST', base, { body: w('old', { name: 'UPPER', size: 1 }) })).status, 201);
    // The rule arrives after the object was stored.
    obj.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.name['x-kubernetes-validations'] =
      [{ rule: 'self.lowerAscii() == self', message: 'name must be lower case' }];
    assert.equal((await api('PUT', `${CRDS}/${obj.metadata.name}`, { body: obj })).status, 200);
    await until(
      async () => (await api('POST', base, { body: w('probe', { name: 'BAD', size: 1 }) })).status === 422,
      'the rule in force',
    );
    const cur = (await api('GET', `${base}/old`)).json;
    cur.spec.size = 2; // name unchanged: its rule ratchets
    const ok = await api('PUT', `${base}/old`, { body: cur });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.deepEqual(warningsOf(ok), [
      '299 - "spec.name: Invalid value: \\"string\\": name must be lower case"',
    ]);
    cur.metadata.resourceVersion = ok.json.metadata.resourceVersion;
    cur.spec.name = 'STILL-UPPER'; // changed: the rule applies
    const bad = await api('PUT', `${base}/old`, { body: cur });
    assert.equal(bad.status, 422);
    assert.match(bad.json.message, /spec\.name: Invalid value: "string": name must be lower case/);
  });

  it('reports compile errors and over-budget rules on the CRD', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.nope == 1' }, { rule: 'self.replicas' }],
          properties: {
            replicas: { type: 'integer' },
            names: {
              type: 'array',
              items: { type: 'string' },
              'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, a == b || a != b))' }],
            },
          },
        },
      },
    };
    const r = await api('POST', CRDS, {
      body: crd({
        group: 'bad.example.com',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      }),
    });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    const causes: string[] = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    const base = 'spec.versions[0].schema.openAPIV3Schema.properties[spec]';
    assert.ok(
      causes.some(
        (c) =>
          c.startsWith(`${base}.x-kubernetes-validations[0].rule: Invalid value:`) &&
          c.includes("compilation failed: ERROR: <input>:1:5: undefined field 'nope'"),
      ),
      causes.join('\n'),
    );
    assert.ok(
      causes.some(
        (c) =>
          c.startsWith(`${base}.x-kubernetes-validations[1].rule`) && c.includes('must evaluate to a bool'),
      ),
      causes.join('\n'),
    );
    assert.ok(
      causes.includes(
        `${base}.properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      ),
      causes.join('\n'),
    );
  });

  it('accepts the same nested rule once the list and strings are bounded', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            names: {
              type: 'array',
              maxItems: 10,
              items: { type: 'string', maxLength: 16 },
              'x-kubernetes-validations': [
                { rule: 'self.all(a, self.exists_one(b, a == b))', message: 'names unique' },
              ],
            },
          },
        },
      },
    };
    await establish(
      api,
      crd({
        group: 'ok.example.com',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      }),
    );
    const r = await api('POST', '/apis/ok.example.com/v1/namespaces/default/widgets', {
      body: {
        apiVersion: 'ok.example.com/v1',
        kind: 'Widget',
        metadata: { name: 'd' },
        spec: { names: ['a', 'a'] },
      },
    });
    assert.equal(r.status, 422);
    assert.match(r.json.message, /spec\.names: Invalid value: "array": names unique/);
  });

  it("stops a rule whose actual cost exceeds the per-call limit, with Kubernetes' message", async () => {
    const quadratic = 'self.all(a, self.all(b, a == b || a != b))';
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            names: {
              type: 'array',
              maxItems: 900,
              items: { type: 'string', maxLength: 10 },
              'x-kubernetes-validations': [{ rule: quadratic }, { rule: quadratic, message: 'second' }],
            },
          },
        },
      },
    };
    await establish(
      api,
      crd({
        group: 'budget.example.com',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      }),
    );
    const base = '/apis/budget.example.com/v1/namespaces/default/widgets';
    const w = (name: string, n: number) => ({
      apiVersion: 'budget.example.com/v1',
      kind: 'Widget',
      metadata: { name },
      spec: { names: Array.from({ length: n }, (_, i) => `n${i}`) },
    });
    assert.equal((await api('POST', base, { body: w('small', 10) })).status, 201);
    const r = await api('POST', base, { body: w('big', 900) });
    assert.equal(r.status, 422, JSON.stringify(r.json).slice(0, 300));
    assert.match(
      r.json.message,
      /spec\.names: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self\.all/,
    );
  });

  it('runs on status and scale writes, root rules reporting the <nil> path', async () => {
    const schema = {
      type: 'object',
      'x-kubernetes-validations': [
        {
          rule: '!has(self.status) || self.status.replicas <= self.spec.replicas',
          message: 'status beyond spec',
        },
      ],
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.replicas <= 10' }],
          properties: { replicas: { type: 'integer' } },
        },
        status: { type: 'object', properties: { replicas: { type: 'integer' } } },
      },
    };
    await establish(
      api,
      crd({
        group: 'sub.example.com',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: schema },
            subresources: {
              status: {},
              scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
            },
          },
        ],
      }),
    );
    const base = '/apis/sub.example.com/v1/namespaces/default/widgets';
    const c = await api('POST', base, {
      body: {
        apiVersion: 'sub.example.com/v1',
        kind: 'Widget',
        metadata: { name: 's' },
        spec: { replicas: 3 },
      },
    });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const st = await api('PUT', `${base}/s/status`, { body: { ...c.json, status: { replicas: 5 } } });
    assert.equal(st.status, 422, JSON.stringify(st.json));
    assert.match(st.json.message, /<nil>: Invalid value: "object": status beyond spec/);
    const scale = (await api('GET', `${base}/s/scale`)).json;
    scale.spec.replicas = 20;
    const sc = await api('PUT', `${base}/s/scale`, { body: scale });
    assert.equal(sc.status, 422, JSON.stringify(sc.json));
    assert.match(sc.json.message, /spec: Invalid value: "object": failed rule: self\.replicas <= 10/);
    scale.spec.replicas = 4;
    assert.equal((await api('PUT', `${base}/s/scale`, { body: scale })).status, 200);
  });
});
