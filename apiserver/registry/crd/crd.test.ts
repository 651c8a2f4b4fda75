// CustomResourceDefinitions end to end over real HTTPS (startTestAPIServer):
// serving, status conditions, validation, custom resource behaviour, deletion.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdAvailable, startEtcd } from '../../storage/etcd3/etcd-server';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { type API, CRDS, WIDGET_SCHEMA, crd, establish, removeCRD, sleep, until } from './test-support';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const MERGE = 'application/merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

/** The Warning header values of a response (one header arrives as a string). */
const warnings = (r: { headers: Record<string, string | string[] | undefined> }): string[] =>
  r.headers.warning === undefined ? [] : [r.headers.warning].flat();

const widget = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name },
  spec,
  ...extra,
});

describe('CustomResourceDefinitions', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: API;

  before(async () => {
    srv = await startTestAPIServer({ featureGates: { ServerSideFieldValidation: 'true' } });
    api = testRequester(srv.config);
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
  });

  describe('serving', () => {
    const full = crd({
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all', 'gadgetry'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: WIDGET_SCHEMA },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.spec.selector',
            },
          },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          selectableFields: [{ jsonPath: '.spec.color' }],
        },
      ],
    });
    const base = '/apis/example.com/v1/namespaces/default/widgets';

    before(async () => {
      const t0 = Date.now();
      await establish(api, full);
      assert.ok(Date.now() - t0 < 1000, `served after ${Date.now() - t0}ms`);
    });

    it('is served within a second, with NamesAccepted, Established, acceptedNames and storedVersions', async () => {
      const got = (await api('GET', `${CRDS}/widgets.example.com`)).json;
      assert.deepEqual(
        got.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
        [
          ['NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'],
          ['Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted'],
        ],
      );
      assert.ok(got.status.conditions.every((c: any) => c.lastTransitionTime));
      assert.deepEqual(got.status.acceptedNames, {
        plural: 'widgets',
        singular: 'widget',
        shortNames: ['wd'],
        kind: 'Widget',
        listKind: 'WidgetList',
        categories: ['all', 'gadgetry'],
      });
      assert.deepEqual(got.status.storedVersions, ['v1']);
      assert.equal(got.spec.conversion.strategy, 'None');
      assert.equal(got.metadata.generation, 1);
    });

    it('appears in discovery (legacy and aggregated v2) with short names, categories and subresources', async () => {
      const groups = (await api('GET', '/apis')).json.groups;
      const g = groups.find((x: any) => x.name === 'example.com');
      assert.deepEqual(g.preferredVersion, { groupVersion: 'example.com/v1', version: 'v1' });
      const list = (await api('GET', '/apis/example.com/v1')).json;
      assert.deepEqual(
        list.resources.map((r: any) => r.name),
        ['widgets', 'widgets/status', 'widgets/scale'],
      );
      const w = list.resources[0];
      assert.deepEqual(w.verbs, [
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'create',
        'update',
        'watch',
      ]);
      assert.deepEqual(w.shortNames, ['wd']);
      assert.deepEqual(w.categories, ['all', 'gadgetry']);
      assert.equal(list.resources[2].group, 'autoscaling');
      const agg = (await api('GET', '/apis', { headers: { accept: AGGREGATED } })).json;
      const item = agg.items.find((i: any) => i.metadata.name === 'example.com');
      const r = item.versions[0].resources[0];
      assert.equal(r.scope, 'Namespaced');
      assert.deepEqual(
        r.subresources.map((s: any) => [s.subresource, s.responseKind.kind]),
        [
          ['status', 'Widget'],
          ['scale', 'Scale'],
        ],
      );
    });

    it('publishes its structural schema in OpenAPI v2 and v3 with x-kubernetes-group-version-kind', async () => {
      const index = (await api('GET', '/openapi/v3')).json;
      assert.ok(index.paths['apis/example.com/v1'], 'v3 index lists the group-version');
      const v3 = (await api('GET', index.paths['apis/example.com/v1'].serverRelativeURL)).json;
      const s = v3.components.schemas['com.example.v1.Widget'];
      assert.deepEqual(s['x-kubernetes-group-version-kind'], [
        { group: 'example.com', kind: 'Widget', version: 'v1' },
      ]);
      assert.equal(s.properties.spec.properties.size.maximum, 10);
      assert.deepEqual(s.properties.spec.properties.ports['x-kubernetes-list-map-keys'], ['name']);
      assert.ok(v3.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale']);
      const v2 = (await api('GET', '/openapi/v2', { headers: { accept: 'application/json' } })).json;
      // v3 keeps defaults; v2 has them pruned, as Kubernetes publishes it.
      assert.equal(s.properties.spec.properties.color.default, 'red');
      assert.equal(
        v2.definitions['com.example.v1.Widget'].properties.spec.properties.color.default,
        undefined,
      );
      assert.equal(v2.definitions['com.example.v1.Widget'].properties.spec.properties.color.type, 'string');
      assert.ok(v2.definitions['com.example.v1.WidgetList']);
      assert.ok(v2.paths['/apis/example.com/v1/namespaces/{namespace}/widgets']);
    });

    it('validates custom resources against the schema: 422 with field causes', async () => {
      const res = await api('POST', base, { body: widget('bad', { size: 20, color: 'green' }) });
      assert.equal(res.status, 422);
      assert.equal(res.json.reason, 'Invalid');
      assert.match(res.json.message, /^Widget\.example\.com "bad" is invalid: /);
      assert.deepEqual(res.json.details.causes.map((c: any) => [c.field, c.reason]).sort(), [
        ['spec.color', 'FieldValueNotSupported'],
        ['spec.size', 'FieldValueInvalid'],
      ]);
      const missing = await api('POST', base, { body: widget('bad', {}) });
      assert.equal(missing.status, 422);
      assert.deepEqual(missing.json.details.causes, [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' },
      ]);
      const name = await api('POST', base, { body: widget('Bad_Name', { size: 1 }) });
      assert.equal(name.status, 422);
      assert.equal(name.json.details.causes[0].field, 'metadata.name');
    });

    it('prunes unknown fields: Warn warns, Strict refuses with 400, defaults are applied', async () => {
      const warned = await api('POST', base, {
        body: widget('w1', { size: 2, junk: 1 }, { extra: true, status: { replicas: 7 } }),
      });
      assert.equal(warned.status, 201, JSON.stringify(warned.json));
      assert.deepEqual(warnings(warned), [
        '299 - "unknown field \\"extra\\""',
        '299 - "unknown field \\"spec.junk\\""',
      ]);
      assert.deepEqual(warned.json.spec, { size: 2, color: 'red' });
      assert.equal(warned.json.extra, undefined);
      assert.equal(warned.json.status, undefined, 'status is dropped on create with a status subresource');
      assert.equal(warned.json.metadata.generation, 1);
      const strict = await api('POST', `${base}?fieldValidation=Strict`, {
        body: widget('w-strict', { size: 2, junk: 1 }),
      });
      assert.equal(strict.status, 400);
      assert.equal(
        strict.json.message,
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.junk"',
      );
      const got = (await api('GET', `${base}/w1`)).json;
      assert.deepEqual(got.spec, { size: 2, color: 'red' });
    });

    it('metadata.generation moves on changes outside metadata and status; /status changes status only', async () => {
      await api('POST', base, { body: widget('gen', { size: 1 }) });
      let r = await api('PATCH', `${base}/gen`, {
        body: { metadata: { labels: { a: 'b' } } },
        contentType: MERGE,
      });
      assert.equal(r.json.metadata.generation, 1);
      r = await api('PATCH', `${base}/gen`, {
        body: { spec: { size: 3 }, status: { phase: 'X' } },
        contentType: MERGE,
      });
      assert.equal(r.json.metadata.generation, 2);
      assert.equal(r.json.status, undefined, 'the main resource ignores status');
      r = await api('PATCH', `${base}/gen/status`, {
        body: { spec: { size: 9 }, status: { phase: 'Ready', replicas: 1 } },
        contentType: MERGE,
      });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.spec, { size: 3, color: 'red' }, '/status ignores the rest');
      assert.deepEqual(r.json.status, { phase: 'Ready', replicas: 1 });
      assert.equal(r.json.metadata.generation, 2);
      const { resourceVersion: _rv, ...unconditional } = r.json.metadata;
      const noRV = await api('PUT', `${base}/gen`, { body: { ...r.json, metadata: unconditional } });
      assert.equal(noRV.status, 422, 'custom resources refuse unconditional updates');
      assert.match(
        noRV.json.message,
        /metadata\.resourceVersion: Invalid value: 0: must be specified for an update/,
      );
      const put = await api('PUT', `${base}/gen/status`, {
        body: { ...r.json, status: { phase: 'Done', replicas: 'many' } },
      });
      assert.equal(put.status, 422, 'status is validated against the schema');
    });

    it('serves the scale subresource from the CRD paths', async () => {
      await api('POST', base, { body: widget('sc', { size: 1, replicas: 2, selector: 'app=sc' }) });
      await api('PATCH', `${base}/sc/status`, { body: { status: { replicas: 1 } }, contentType: MERGE });
      const s = (await api('GET', `${base}/sc/scale`)).json;
      assert.equal(s.kind, 'Scale');
      assert.equal(s.apiVersion, 'autoscaling/v1');
      assert.deepEqual(s.spec, { replicas: 2 });
      assert.deepEqual(s.status, { replicas: 1, selector: 'app=sc' });
      const patched = await api('PATCH', `${base}/sc/scale`, {
        body: { spec: { replicas: 5 } },
        contentType: MERGE,
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.json.spec.replicas, 5);
      const obj = (await api('GET', `${base}/sc`)).json;
      assert.equal(obj.spec.replicas, 5);
      assert.equal(obj.metadata.generation, 2);
      const negative = await api('PUT', `${base}/sc/scale`, {
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name: 'sc' },
          spec: { replicas: -1 },
        },
      });
      assert.equal(negative.status, 422);
    });

    it('is JSON only: 406 when only Protobuf is acceptable, 415 for strategic merge patches', async () => {
      await api('POST', base, { body: widget('json', { size: 1 }) });
      const pb = await api('GET', `${base}/json`, {
        headers: { accept: 'application/vnd.kubernetes.protobuf' },
      });
      assert.equal(pb.status, 406);
      const ok = await api('GET', `${base}/json`, {
        headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
      });
      assert.equal(ok.status, 200);
      assert.match(String(ok.headers['content-type']), /^application\/json/);
      const smp = await api('PATCH', `${base}/json`, {
        body: { spec: { size: 2 } },
        contentType: 'application/strategic-merge-patch+json',
      });
      assert.equal(smp.status, 415);
    });

    it('server-side apply merges x-kubernetes-list-type=map lists per key and reports conflicts', async () => {
      const apply = (manager: string, spec: Record<string, unknown>, force = false) =>
        api('PATCH', `${base}/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, {
          body: widget('ssa', spec),
          contentType: APPLY,
        });
      let r = await apply('alice', { size: 1, ports: [{ name: 'http', port: 80 }] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      r = await apply('bob', { ports: [{ name: 'https', port: 443 }] });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.spec.ports, [
        { name: 'http', port: 80 },
        { name: 'https', port: 443 },
      ]);
      const bob = r.json.metadata.managedFields.find((m: any) => m.manager === 'bob');
      assert.deepEqual(Object.keys(bob.fieldsV1['f:spec']['f:ports']), ['k:{"name":"https"}']);
      r = await apply('bob', { ports: [{ name: 'http', port: 8080 }] });
      assert.equal(r.status, 409);
      assert.match(r.json.message, /conflict with "alice": \.spec\.ports\[name="http"\]\.port/);
      r = await apply('bob', { ports: [{ name: 'http', port: 8080 }] }, true);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.spec.ports, [{ name: 'http', port: 8080 }]);
    });

    it('prints tables with the additionalPrinterColumns (Name first)', async () => {
      await api('POST', base, { body: widget('tbl', { size: 4, color: 'blue' }) });
      const t = (
        await api('GET', `${base}?fieldSelector=metadata.name%3Dtbl`, { headers: { accept: TABLE } })
      ).json;
      assert.equal(t.kind, 'Table');
      assert.deepEqual(
        t.columnDefinitions.map((c: any) => [c.name, c.type, c.priority]),
        [
          ['Name', 'string', 0],
          ['Size', 'integer', 0],
          ['Color', 'string', 1],
          ['Age', 'date', 0],
        ],
      );
      assert.deepEqual(t.rows[0].cells.slice(0, 3), ['tbl', 4, 'blue']);
      assert.match(t.rows[0].cells[3], /^\d+s$/);
    });

    it('filters with selectable fields; other fields are refused', async () => {
      const r = await api('GET', `${base}?fieldSelector=spec.color%3Dblue`);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.json.items.map((i: any) => i.metadata.name),
        ['tbl'],
      );
      const bad = await api('GET', `${base}?fieldSelector=spec.size%3D1`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.message, 'field label not supported: spec.size');
    });

    it('watches custom resources', async () => {
      const list = (await api('GET', base)).json;
      const watch = api(
        'GET',
        `${base}?watch=true&timeoutSeconds=1&resourceVersion=${list.metadata.resourceVersion}`,
      );
      await sleep(100);
      await api('POST', base, { body: widget('watched', { size: 1 }) });
      const events = (await watch).body
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        events.map((e) => [e.type, e.object.metadata.name]),
        [['ADDED', 'watched']],
      );
    });
  });

  describe('CRD validation (apiextensions.k8s.io/v1 rules)', () => {
    const invalid = async (obj: any) => {
      const r = await api('POST', CRDS, { body: obj });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      return r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`) as string[];
    };

    it('requires scope, a structural schema per version, one storage version; refuses preserveUnknownFields', async () => {
      const obj = crd({ group: 'v.example.com' });
      delete obj.spec.scope;
      obj.spec.preserveUnknownFields = true;
      obj.spec.versions = [
        { name: 'v1', served: true, storage: true },
        {
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} } } } },
        },
      ];
      const causes = await invalid(obj);
      for (const want of [
        'spec.scope: Required value',
        'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
        'spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
        'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ])
        assert.ok(causes.includes(want), `${want}\nin ${causes.join('\n')}`);
      assert.ok(causes.some((c) => c.endsWith('must have exactly one version marked as storage version')));
    });

    it('checks names, the CRD name, printer columns, scale paths, selectable fields and defaults', async () => {
      const obj = crd({
        group: 'v.example.com',
        plural: 'things',
        names: { plural: 'things', kind: 'Thing', listKind: 'Thing', shortNames: ['Bad_Short'] },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            deprecationWarning: 'not deprecated',
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      n: { type: 'integer', default: 'three' },
                      o: { type: 'object' },
                      l: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } },
                    },
                  },
                },
              },
            },
            subresources: {
              scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: '.spec.replicas' },
            },
            additionalPrinterColumns: [{ name: 'X', type: 'text', jsonPath: 'spec.n' }],
            selectableFields: [{ jsonPath: '.spec.o' }, { jsonPath: '.spec.missing' }],
          },
        ],
      });
      obj.metadata.name = 'wrong.v.example.com';
      const causes = await invalid(obj);
      for (const want of [
        'metadata.name: Invalid value: "wrong.v.example.com": must be spec.names.plural+"."+spec.group',
        'spec.names.listKind: Invalid value: "Thing": kind and listKind may not be the same',
        'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
        'spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
        'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text": supported values: "boolean", "date", "integer", "number", "string"',
        'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.n": must be a simple json path starting with .',
        'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.o": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        'spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
        'spec.versions[0].deprecationWarning: Invalid value: "not deprecated": can only be set for deprecated versions',
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map',
      ])
        assert.ok(causes.includes(want), `${want}\nin ${causes.join('\n')}`);
      assert.ok(causes.some((c) => c.startsWith('spec.names.shortNames[0]: Invalid value: "Bad_Short"')));
    });

    it('checks defaults against their schema once the schema is structural', async () => {
      const obj = crd({
        group: 'd.example.com',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { n: { type: 'integer', default: 'three' } } },
                },
              },
            },
          },
        ],
      });
      const causes = await invalid(obj);
      assert.deepEqual(causes.length, 1);
      assert.match(
        causes[0],
        /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[n\]\.default: Invalid value: "three": /,
      );
    });

    it('protected groups need the API approval annotation', async () => {
      const causes = await invalid(crd({ group: 'things.k8s.io' }));
      assert.deepEqual(causes, [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
      ]);
      const ok = crd({ group: 'things.k8s.io' });
      ok.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, testing only' };
      assert.equal((await api('POST', CRDS, { body: ok })).status, 201);
      await removeCRD(api, ok.metadata.name);
    });

    it('accepts and ignores x-kubernetes-validations while CustomResourceValidationExpressions is off', async () => {
      const schema = structuredClone(WIDGET_SCHEMA) as any;
      schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.size < 5', message: 'too big' }];
      const obj = crd({
        group: 'cel.example.com',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      });
      const created = await establish(api, obj);
      assert.deepEqual(
        created.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'],
        [{ rule: 'self.size < 5', message: 'too big' }],
      );
      const r = await api('POST', '/apis/cel.example.com/v1/namespaces/default/widgets', {
        body: { ...widget('big', { size: 9 }), apiVersion: 'cel.example.com/v1' },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    });

    it('update rules: group and plural immutable, scope and kind once established, storedVersions kept in spec', async () => {
      const obj = await establish(api, crd({ group: 'u.example.com' }));
      const put = async (mut: (o: any) => void) => {
        const cur = (await api('GET', `${CRDS}/widgets.u.example.com`)).json;
        mut(cur);
        return api('PUT', `${CRDS}/widgets.u.example.com`, { body: cur });
      };
      let r = await put((o) => (o.spec.scope = 'Cluster'));
      assert.equal(r.status, 422);
      assert.match(r.json.message, /spec\.scope: Invalid value: "Cluster": field is immutable/);
      r = await put((o) => (o.spec.names.kind = 'Gizmo'));
      assert.match(r.json.message, /spec\.names\.kind: Invalid value: "Gizmo": field is immutable/);
      r = await put((o) => {
        o.spec.versions[0].storage = false;
        o.spec.versions.push({
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: WIDGET_SCHEMA },
        });
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.status.storedVersions, ['v1', 'v2']);
      assert.equal(r.json.metadata.generation, obj.metadata.generation + 1);
      r = await put((o) => (o.spec.versions = [o.spec.versions[1]]));
      assert.equal(r.status, 422);
      assert.match(
        r.json.message,
        /status\.storedVersions\[0\]: Invalid value: "v1": must appear in spec\.versions/,
      );
      const noRV = (await api('GET', `${CRDS}/widgets.u.example.com`)).json;
      delete noRV.metadata.resourceVersion;
      assert.equal((await api('PUT', `${CRDS}/widgets.u.example.com`, { body: noRV })).status, 422);
    });
  });

  describe('custom resource behaviour', () => {
    it('cluster-scoped resources live outside namespaces', async () => {
      await establish(
        api,
        crd({ group: 'c.example.com', plural: 'clusterwidgets', kind: 'ClusterWidget', scope: 'Cluster' }),
      );
      const base = '/apis/c.example.com/v1/clusterwidgets';
      const r = await api('POST', base, {
        body: {
          apiVersion: 'c.example.com/v1',
          kind: 'ClusterWidget',
          metadata: { name: 'cw' },
          spec: { size: 1 },
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      assert.equal(r.json.metadata.namespace, undefined);
      assert.equal((await api('GET', `${base}/cw`)).status, 200);
      // Without additionalPrinterColumns a table has Name and Age.
      const t = (await api('GET', base, { headers: { accept: TABLE } })).json;
      assert.deepEqual(
        t.columnDefinitions.map((c: any) => [c.name, c.type, c.format]),
        [
          ['Name', 'string', 'name'],
          ['Age', 'date', ''],
        ],
      );
      assert.equal(t.rows[0].cells[0], 'cw');
      assert.equal(
        (await api('GET', '/apis/c.example.com/v1/namespaces/default/clusterwidgets/cw')).status,
        404,
      );
    });

    it('x-kubernetes-int-or-string, nullable, preserve-unknown-fields and embedded resources', async () => {
      const schema = {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              port: { 'x-kubernetes-int-or-string': true },
              note: { type: 'string', nullable: true },
              gone: { type: 'string' },
              free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              template: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
              when: { type: 'string', format: 'date-time' },
            },
          },
        },
      };
      await establish(
        api,
        crd({
          group: 'k.example.com',
          plural: 'kinds',
          kind: 'Kind',
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
        }),
      );
      const base = '/apis/k.example.com/v1/namespaces/default/kinds';
      const obj = (name: string, spec: any) => ({
        apiVersion: 'k.example.com/v1',
        kind: 'Kind',
        metadata: { name },
        spec,
      });
      let r = await api('POST', base, {
        body: obj('a', {
          port: 'http',
          note: null,
          gone: null,
          free: { any: { deep: [1, 2] } },
          template: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'p' },
            spec: { containers: [] },
            junk: 1,
          },
        }),
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      assert.deepEqual(r.json.spec, {
        port: 'http',
        note: null,
        free: { any: { deep: [1, 2] } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } },
      });
      r = await api('POST', base, { body: obj('b', { port: 8080 }) });
      assert.equal(r.status, 201);
      r = await api('POST', base, {
        body: obj('c', { port: true, when: 'yesterday', template: { spec: {} } }),
      });
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.details.causes.map((c: any) => c.field).sort(), [
        'spec.port',
        'spec.template.apiVersion',
        'spec.template.kind',
        'spec.when',
      ]);
    });

    it('serves every served version (conversion None) with deprecation warnings; storage stays one', async () => {
      const v = (name: string, extra: Record<string, unknown> = {}) => ({
        name,
        served: true,
        storage: false,
        schema: { openAPIV3Schema: WIDGET_SCHEMA },
        ...extra,
      });
      await establish(
        api,
        crd({
          group: 'mv.example.com',
          versions: [
            v('v1', { storage: true }),
            v('v1beta1', { deprecated: true }),
            v('v1alpha1', { deprecated: true, deprecationWarning: 'v1alpha1 goes away soon' }),
            v('v2', { served: false }),
          ],
        }),
      );
      const created = await api('POST', '/apis/mv.example.com/v1beta1/namespaces/default/widgets', {
        body: {
          apiVersion: 'mv.example.com/v1beta1',
          kind: 'Widget',
          metadata: { name: 'x' },
          spec: { size: 1 },
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.equal(created.json.apiVersion, 'mv.example.com/v1beta1');
      assert.deepEqual(warnings(created), [
        '299 - "mv.example.com/v1beta1 Widget is deprecated; use mv.example.com/v1 Widget"',
      ]);
      const v1 = await api('GET', '/apis/mv.example.com/v1/namespaces/default/widgets/x');
      assert.equal(v1.json.apiVersion, 'mv.example.com/v1');
      assert.deepEqual(warnings(v1), []);
      assert.deepEqual(v1.json.spec, created.json.spec);
      const alpha = await api('GET', '/apis/mv.example.com/v1alpha1/namespaces/default/widgets');
      assert.equal(alpha.json.items[0].apiVersion, 'mv.example.com/v1alpha1');
      assert.deepEqual(warnings(alpha), ['299 - "v1alpha1 goes away soon"']);
      assert.equal((await api('GET', '/apis/mv.example.com/v2/namespaces/default/widgets')).status, 404);
      const raw = await srv.running.storage.get('/registry/mv.example.com/widgets/default/x');
      assert.equal(
        JSON.parse(raw.kv!.value.toString()).apiVersion,
        'mv.example.com/v1',
        'stored in the storage version',
      );
      const versions = (await api('GET', '/apis/mv.example.com')).json.versions.map((x: any) => x.version);
      assert.deepEqual(versions, ['v1', 'v1beta1', 'v1alpha1']);
    });

    it('applies new schema defaults when reading objects stored before', async () => {
      const obj = await establish(api, crd({ group: 'rd.example.com' }));
      const base = '/apis/rd.example.com/v1/namespaces/default/widgets';
      await api('POST', base, {
        body: {
          apiVersion: 'rd.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'old' },
          spec: { size: 1 },
        },
      });
      const schema = structuredClone(WIDGET_SCHEMA) as any;
      schema.properties.spec.properties.level = { type: 'integer', default: 7 };
      obj.spec.versions[0].schema.openAPIV3Schema = schema;
      const r = await api('PUT', `${CRDS}/${obj.metadata.name}`, { body: obj });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await until(async () => (await api('GET', `${base}/old`)).json.spec.level === 7, 'default on read');
    });

    it('NamesAccepted is False on conflicts and recovers when the other CRD goes away', async () => {
      await establish(
        api,
        crd({
          group: 'n.example.com',
          plural: 'apples',
          kind: 'Apple',
          names: { plural: 'apples', kind: 'Apple', shortNames: ['ap'] },
        }),
      );
      const second = crd({
        group: 'n.example.com',
        plural: 'pears',
        names: { plural: 'pears', kind: 'Pear', shortNames: ['ap'] },
      });
      assert.equal((await api('POST', CRDS, { body: second })).status, 201);
      const got = await until(async () => {
        const c = (await api('GET', `${CRDS}/pears.n.example.com`)).json;
        return c.status?.conditions?.length ? c : undefined;
      }, 'pears conditions');
      const cond = (t: string) => got.status.conditions.find((c: any) => c.type === t);
      assert.deepEqual(
        [cond('NamesAccepted').status, cond('NamesAccepted').reason, cond('NamesAccepted').message],
        ['False', 'ShortNamesConflict', '"ap" is already in use'],
      );
      assert.deepEqual([cond('Established').status, cond('Established').reason], ['False', 'NotAccepted']);
      assert.equal(got.status.acceptedNames.plural, 'pears');
      assert.equal((await api('GET', '/apis/n.example.com/v1/namespaces/default/pears')).status, 404);
      await removeCRD(api, 'apples.n.example.com');
      await until(
        async () => (await api('GET', '/apis/n.example.com/v1/namespaces/default/pears')).status === 200,
        'pears served',
      );
      const after = (await api('GET', `${CRDS}/pears.n.example.com`)).json;
      assert.deepEqual(after.status.acceptedNames.shortNames, ['ap']);
    });
  });

  describe('deletion', () => {
    it('marks the CRD Terminating, deletes its objects (waiting for their finalizers), then removes it', async () => {
      await establish(api, crd({ group: 'del.example.com' }));
      const base = (ns: string) => `/apis/del.example.com/v1/namespaces/${ns}/widgets`;
      await api('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } },
      });
      for (const [ns, name] of [
        ['default', 'a'],
        ['default', 'b'],
        ['other', 'c'],
      ])
        assert.equal(
          (
            await api('POST', base(ns), {
              body: {
                apiVersion: 'del.example.com/v1',
                kind: 'Widget',
                metadata: { name },
                spec: { size: 1 },
              },
            })
          ).status,
          201,
        );
      await api('PATCH', `${base('default')}/b`, {
        body: { metadata: { finalizers: ['example.com/hold'] } },
        contentType: MERGE,
      });
      const del = await api('DELETE', `${CRDS}/widgets.del.example.com`);
      assert.equal(del.status, 200);
      assert.ok(del.json.metadata.deletionTimestamp);
      assert.deepEqual(del.json.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
      const terminating = del.json.status.conditions.find((c: any) => c.type === 'Terminating');
      assert.deepEqual([terminating.status, terminating.reason], ['True', 'InstanceDeletionPending']);
      // The held object keeps the CRD alive; new objects are refused meanwhile.
      await until(async () => (await api('GET', `${base('default')}/a`)).status === 404, 'a deleted');
      // The cleanup deletes one object after another: b is marked a moment after a is gone.
      await until(
        async () => !!(await api('GET', `${base('default')}/b`)).json.metadata.deletionTimestamp,
        'b marked for deletion',
      );
      const held = (await api('GET', `${base('default')}/b`)).json;
      assert.ok(held.metadata.deletionTimestamp);
      const refused = await api('POST', base('default'), {
        body: {
          apiVersion: 'del.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'late' },
          spec: { size: 1 },
        },
      });
      assert.equal(refused.status, 405);
      assert.equal(
        refused.json.message,
        'create not allowed while custom resource definition is terminating',
      );
      const crdNow = (await api('GET', `${CRDS}/widgets.del.example.com`)).json;
      assert.equal(
        crdNow.status.conditions.find((c: any) => c.type === 'Terminating').reason,
        'InstanceDeletionInProgress',
      );
      await api('PATCH', `${base('default')}/b`, {
        body: { metadata: { finalizers: null } },
        contentType: MERGE,
      });
      await until(
        async () => (await api('GET', `${CRDS}/widgets.del.example.com`)).status === 404,
        'CRD gone',
        10_000,
      );
      await until(async () => (await api('GET', base('other'))).status === 404, 'objects unserved');
      const left = await srv.running.storage.range('/registry/del.example.com/');
      assert.equal(left.kvs.length, 0, 'no custom resources left in storage');
      const groups = (await api('GET', '/apis')).json.groups.map((g: any) => g.name);
      assert.ok(!groups.includes('del.example.com'));
    });

    it('a CRD naming a built-in resource is not served and its deletion leaves the built-in objects', async () => {
      const role = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'keep-me' },
        rules: [],
      };
      assert.equal(
        (await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { body: role }))
          .status,
        201,
      );
      const shadow = crd({ group: 'rbac.authorization.k8s.io', plural: 'roles', kind: 'Role' });
      shadow.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, test' };
      shadow.spec.versions[0].name = 'v9';
      assert.equal((await api('POST', CRDS, { body: shadow })).status, 201);
      await until(async () => {
        const c = (await api('GET', `${CRDS}/roles.rbac.authorization.k8s.io`)).json;
        return c.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True');
      }, 'established');
      assert.equal(
        (await api('GET', '/apis/rbac.authorization.k8s.io/v9/namespaces/default/roles')).status,
        404,
      );
      await api('DELETE', `${CRDS}/roles.rbac.authorization.k8s.io`);
      await until(
        async () => (await api('GET', `${CRDS}/roles.rbac.authorization.k8s.io`)).status === 404,
        'gone',
      );
      assert.equal(
        (await api('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/keep-me')).status,
        200,
      );
    });

    it('a CRD that never got established is removed at once', async () => {
      const a = crd({ group: 'ne.example.com', plural: 'ones', names: { plural: 'ones', kind: 'One' } });
      await establish(api, a);
      const b = crd({ group: 'ne.example.com', plural: 'twos', names: { plural: 'twos', kind: 'One' } });
      await api('POST', CRDS, { body: b });
      await until(
        async () => (await api('GET', `${CRDS}/twos.ne.example.com`)).json.status?.conditions?.length,
        'conditions',
      );
      await removeCRD(api, 'twos.ne.example.com');
    });
  });
});

describe('CustomResourceDefinitions across restarts and apiservers', function () {
  this.timeout(90_000);

  it('a restarted apiserver serves the CRDs created before it started', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tkube-crd-restart-'));
    try {
      let srv = await startTestAPIServer({ dataDir });
      let api = testRequester(srv.config);
      await establish(api, crd({ group: 'restart.example.com' }));
      await api('POST', '/apis/restart.example.com/v1/namespaces/default/widgets', {
        body: {
          apiVersion: 'restart.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'kept' },
          spec: { size: 1 },
        },
      });
      await api.close();
      await srv.stop();
      srv = await startTestAPIServer({ dataDir });
      api = testRequester(srv.config);
      try {
        const synced = '/readyz/poststarthook/crd-informer-synced';
        await until(async () => (await api('GET', synced)).status === 200, 'CRDs synced');
        const r = await api('GET', '/apis/restart.example.com/v1/namespaces/default/widgets/kept');
        assert.equal(r.status, 200, 'served as soon as the server is ready');
        assert.equal(r.json.spec.color, 'red');
        assert.ok((await api('GET', '/apis/restart.example.com/v1')).json.resources.length);
      } finally {
        await api.close();
        await srv.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('two apiservers on one etcd see the CRDs created through each other', async function () {
    if (!etcdAvailable()) this.skip();
    const etcd = await startEtcd();
    const a = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    const b = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    const apiA = testRequester(a.config);
    const apiB = testRequester(b.config);
    try {
      const synced = '/readyz/poststarthook/crd-informer-synced';
      await until(async () => (await apiB('GET', synced)).status === 200, 'b synced', 20_000);
      const res = await apiA('POST', CRDS, { body: crd({ group: 'ha.example.com' }) });
      assert.equal(res.status, 201);
      const list = '/apis/ha.example.com/v1/namespaces/default/widgets';
      await until(async () => (await apiB('GET', list)).status === 200, 'served by b', 5000);
      const created = await apiB('POST', list, {
        body: { apiVersion: 'ha.example.com/v1', kind: 'Widget', metadata: { name: 'x' }, spec: { size: 1 } },
      });
      assert.equal(created.status, 201);
      assert.equal((await apiA('GET', `${list}/x`)).status, 200);
      const disco = (await apiB('GET', '/apis/ha.example.com/v1')).json;
      assert.equal(disco.resources[0].name, 'widgets');
      await apiB('DELETE', `${CRDS}/widgets.ha.example.com`);
      await until(async () => (await apiA('GET', list)).status === 404, 'unserved by a', 10_000);
      await until(async () => (await apiB('GET', list)).status === 404, 'unserved by b', 10_000);
    } finally {
      await apiA.close();
      await apiB.close();
      await a.stop();
      await b.stop();
      await etcd.stop();
    }
  });
});
