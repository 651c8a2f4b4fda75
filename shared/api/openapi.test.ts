import assert from 'node:assert/strict';
import { featureGates } from '../options/feature-gates';
import { builtinResources } from './catalog';
import {
  buildOpenAPIV2,
  buildOpenAPIV3,
  buildOpenAPIV3Index,
  contentHash,
  groupVersionPath,
  OpenAPIService,
} from './openapi';
import { refsIn, type Schema } from './openapi-schema';
import { definitionOf, formatAPIVersion } from './schema';
import type { ResourceFacts } from './schema-types';

const POD = 'io.k8s.api.core.v1.PodSpec';
const ACTIONS = new Set([
  'get',
  'list',
  'watch',
  'watchlist',
  'post',
  'put',
  'patch',
  'delete',
  'deletecollection',
  'connect',
]);

function allRefsResolve(doc: Schema, flavor: 'v2' | 'v3'): string[] {
  const defs = flavor === 'v2' ? doc.definitions : doc.components.schemas;
  return [...new Set(refsIn(doc, flavor))].filter((r) => !(r in defs));
}

/** kubectl's check before --validate=strict uses server-side validation (cli-runtime query_param_verifier_v3). */
function supportsFieldValidation(
  doc: Schema,
  gvk: { group: string; version: string; kind: string },
): boolean {
  for (const item of Object.values(doc.paths as Record<string, Schema>)) {
    const op = item.patch;
    const g = op?.['x-kubernetes-group-version-kind'];
    if (!g || g.group !== gvk.group || g.version !== gvk.version || g.kind !== gvk.kind) continue;
    return (op.parameters as Schema[]).some((p) => p.name === 'fieldValidation');
  }
  return false;
}

describe('openapi v2', () => {
  // The documents advertise fieldValidation only while ServerSideFieldValidation is on.
  before(() => featureGates.set({ ServerSideFieldValidation: 'true' }));
  after(() => featureGates.reset());

  const resources = builtinResources();
  const doc = buildOpenAPIV2(resources);

  it('has a definition with its GVK for every served kind and list kind', () => {
    for (const r of resources) {
      const d = doc.definitions[r.definition];
      assert.ok(d, r.definition);
      assert.ok(
        d['x-kubernetes-group-version-kind'].some(
          (g: any) => g.group === r.group && g.version === r.version && g.kind === r.kind,
        ),
        `${r.definition} lacks its GVK`,
      );
      const list = definitionOf({ group: r.group, version: r.version, kind: r.listKind });
      if (list) assert.ok(doc.definitions[list], list);
    }
  });

  it('every $ref resolves', () => {
    assert.deepStrictEqual(allRefsResolve(doc, 'v2'), []);
    assert.ok(refsIn(doc, 'v2').every((r) => !r.includes('#')));
  });

  it('carries merge keys, list and map types, int-or-string and required', () => {
    const spec = doc.definitions[POD].properties;
    assert.deepStrictEqual(spec.containers, {
      type: 'array',
      items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    assert.equal(spec.volumes['x-kubernetes-patch-strategy'], 'merge,retainKeys');
    assert.equal(spec.nodeSelector['x-kubernetes-map-type'], 'atomic');
    assert.deepStrictEqual(spec.nodeSelector.additionalProperties, { type: 'string' });
    assert.deepStrictEqual(doc.definitions[POD].required, ['containers']);
    assert.deepStrictEqual(doc.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], {
      type: 'string',
      format: 'int-or-string',
    });
    assert.deepStrictEqual(spec.restartPolicy.enum, ['Always', 'Never', 'OnFailure']);
    assert.equal(doc.definitions['io.k8s.api.core.v1.ObjectReference']['x-kubernetes-map-type'], 'atomic');
    assert.deepStrictEqual(doc.definitions['io.k8s.apimachinery.pkg.runtime.RawExtension'], {
      type: 'object',
    });
    const subj = doc.definitions['io.k8s.api.flowcontrol.v1.Subject']['x-kubernetes-unions'];
    assert.equal(subj[0].discriminator, 'kind');
    assert.equal(subj[0]['fields-to-discriminateBy'].serviceAccount, 'ServiceAccount');
  });

  it('has a path and verb for every resource, with actions and GVKs', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
        ids.add(op.operationId);
        if (op['x-kubernetes-action']) assert.ok(ACTIONS.has(op['x-kubernetes-action']), `${path} ${method}`);
        for (const p of op.parameters ?? [])
          if (p.in === 'body') assert.ok(p.schema.$ref, `${path} ${method} body`);
      }
      for (const name of path.match(/\{[^}]+\}/g) ?? []) {
        assert.ok(
          item.parameters.some((p: Schema) => `{${p.name}}` === name && p.in === 'path' && p.required),
          `${path} lacks ${name}`,
        );
      }
    }
    // Every verb of every resource (and subresource) has its operation, tagged with the kind.
    const method: Record<string, string> = {
      get: 'get',
      create: 'post',
      update: 'put',
      patch: 'patch',
      delete: 'delete',
    };
    for (const r of resources) {
      const base = `${r.group ? `/apis/${r.group}` : '/api'}/${r.version}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
      const check = (path: string, m: string, kind: string) => {
        const op = doc.paths[path]?.[m];
        assert.ok(op, `${m} ${path}`);
        assert.equal(op['x-kubernetes-group-version-kind'].kind, kind, `${m} ${path}`);
      };
      for (const v of r.verbs) {
        if (v === 'list') check(base, 'get', r.kind);
        else if (v === 'deletecollection') check(base, 'delete', r.kind);
        else if (v === 'create') check(base, 'post', r.kind);
        else if (v === 'watch') check(base.replace(`/${r.version}/`, `/${r.version}/watch/`), 'get', r.kind);
        else check(`${base}/{name}`, method[v], r.kind);
      }
      for (const sub of r.subresources ?? []) {
        for (const v of sub.verbs) check(`${base}/{name}/${sub.name}`, method[v], sub.kind);
      }
    }
    const pods = doc.paths['/api/v1/namespaces/{namespace}/pods'];
    assert.equal(pods.get['x-kubernetes-action'], 'list');
    assert.deepStrictEqual(pods.get['x-kubernetes-group-version-kind'], {
      group: '',
      kind: 'Pod',
      version: 'v1',
    });
    assert.equal(pods.get.responses['200'].schema.$ref, '#/definitions/io.k8s.api.core.v1.PodList');
    assert.equal(pods.post['x-kubernetes-action'], 'post');
    assert.equal(pods.delete['x-kubernetes-action'], 'deletecollection');
    assert.ok(doc.paths['/api/v1/pods'].get);
    const pod = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'];
    assert.deepStrictEqual(Object.keys(pod).sort(), ['delete', 'get', 'parameters', 'patch', 'put']);
    assert.ok(pod.patch.consumes.includes('application/strategic-merge-patch+json'));
    assert.equal(
      doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'].get['x-kubernetes-action'],
      'connect',
    );
    const scale = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].put;
    assert.deepStrictEqual(scale['x-kubernetes-group-version-kind'], {
      group: 'autoscaling',
      kind: 'Scale',
      version: 'v1',
    });
    assert.equal(
      doc.paths['/apis/apps/v1/watch/namespaces/{namespace}/deployments'].get['x-kubernetes-action'],
      'watchlist',
    );
    assert.ok(doc.paths['/apis/apps/v1/'].get);
    assert.ok(doc.paths['/version/'].get);
    const nsPaths = Object.keys(doc.paths).filter((p) =>
      p.startsWith('/api/v1/namespaces/{namespace}/namespaces'),
    );
    assert.deepStrictEqual(nsPaths, []); // namespaces are cluster-scoped
  });
});

describe('openapi v3', () => {
  before(() => featureGates.set({ ServerSideFieldValidation: 'true' }));
  after(() => featureGates.reset());

  const resources = builtinResources();
  const gvs = [...new Set(resources.map((r) => formatAPIVersion(r.group, r.version)))];

  it('one document per group-version: its kinds with GVKs, refs resolve, only reachable schemas', () => {
    for (const gv of gvs) {
      const doc = buildOpenAPIV3(gv, resources);
      assert.equal(doc.openapi, '3.0.0');
      assert.deepStrictEqual(allRefsResolve(doc, 'v3'), [], gv);
      for (const r of resources.filter((x) => formatAPIVersion(x.group, x.version) === gv)) {
        const s = doc.components.schemas[r.definition];
        assert.ok(s, `${gv} ${r.definition}`);
        assert.ok(
          s['x-kubernetes-group-version-kind'].some((g: any) => g.kind === r.kind && g.version === r.version),
        );
        if (r.verbs.includes('patch')) {
          assert.ok(supportsFieldValidation(doc, r), `${gv} ${r.kind}: no fieldValidation on PATCH`);
        }
      }
    }
    const apps = buildOpenAPIV3('apps/v1', resources).components.schemas;
    assert.ok(apps['io.k8s.api.core.v1.PodSpec']);
    assert.ok(!apps['io.k8s.api.batch.v1.Job']);
    assert.ok(!apps['io.k8s.api.core.v1.Service']);
  });

  it('wraps property $refs in allOf, keeps extensions, oneOf for int-or-string and quantity', () => {
    const s = buildOpenAPIV3('v1', resources).components.schemas;
    assert.deepStrictEqual(s['io.k8s.api.core.v1.Pod'].properties.spec, {
      allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }],
    });
    assert.deepStrictEqual(s[POD].properties.containers.items, {
      $ref: '#/components/schemas/io.k8s.api.core.v1.Container',
    });
    assert.equal(s[POD].properties.containers['x-kubernetes-patch-merge-key'], 'name');
    assert.deepStrictEqual(s['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], {
      oneOf: [{ type: 'integer' }, { type: 'string' }],
      format: 'int-or-string',
    });
    assert.deepStrictEqual(s['io.k8s.apimachinery.pkg.api.resource.Quantity'], {
      oneOf: [{ type: 'string' }, { type: 'number' }],
    });
    const patch = buildOpenAPIV3('v1', resources).paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    assert.ok(patch.requestBody.content['application/apply-patch+yaml']);
    assert.ok(patch.responses['200'].content['application/vnd.kubernetes.protobuf']);
  });

  it('accepts "v1", "apps/v1" and path forms', () => {
    assert.equal(groupVersionPath('v1'), 'api/v1');
    assert.equal(groupVersionPath('apps/v1'), 'apis/apps/v1');
    assert.equal(groupVersionPath('apis/apps/v1'), 'apis/apps/v1');
    assert.deepStrictEqual(buildOpenAPIV3('apis/apps/v1', resources), buildOpenAPIV3('apps/v1', resources));
  });

  it('index: one entry per group-version with the content hash', () => {
    const own = buildOpenAPIV3Index(['apps/v1']).paths['apis/apps/v1'].serverRelativeURL;
    assert.equal(
      own,
      `/openapi/v3/apis/apps/v1?hash=${contentHash(JSON.stringify(buildOpenAPIV3('apps/v1', resources)))}`,
    );
    assert.match(own, /hash=[0-9A-F]{128}$/);
    const idx = buildOpenAPIV3Index(['v1', 'apps/v1'], (p) => `H-${p}`);
    assert.deepStrictEqual(idx, {
      paths: {
        'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=H-api/v1' },
        'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=H-apis/apps/v1' },
      },
    });
  });
});

describe('openapi service: lazy, memoised, invalidated by custom resources', () => {
  before(() => featureGates.set({ ServerSideFieldValidation: 'true' }));
  after(() => featureGates.reset());

  const crd: ResourceFacts = {
    group: 'stable.example.com',
    version: 'v1',
    resource: 'crontabs',
    kind: 'CronTab',
    singular: 'crontab',
    namespaced: true,
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
    definition: 'com.example.stable.v1.CronTab',
    subresources: [{ name: 'status', kind: 'CronTab', verbs: ['get', 'update', 'patch'] }],
  };
  const crdSchemas = (flavor: 'v2' | 'v3', field: string) => {
    const prefix = flavor === 'v2' ? '#/definitions/' : '#/components/schemas/';
    const gvk = (kind: string) => [{ group: 'stable.example.com', version: 'v1', kind }];
    return {
      'com.example.stable.v1.CronTab': {
        type: 'object',
        properties: {
          metadata: { $ref: `${prefix}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` },
          spec: { type: 'object', properties: { [field]: { type: 'string' } } },
        },
        'x-kubernetes-group-version-kind': gvk('CronTab'),
      },
      'com.example.stable.v1.CronTabList': {
        type: 'object',
        properties: { items: { type: 'array', items: { $ref: `${prefix}com.example.stable.v1.CronTab` } } },
        'x-kubernetes-group-version-kind': gvk('CronTabList'),
      },
    };
  };

  it('builds nothing up front and memoises each document', () => {
    const svc = new OpenAPIService(builtinResources(), { version: 'v1.36.0-tkube' });
    const a = svc.v3('apps/v1')!;
    assert.equal(svc.v3('apis/apps/v1'), a);
    assert.equal(a.hash, contentHash(a.json));
    assert.equal(JSON.parse(a.json.toString()).info.version, 'v1.36.0-tkube');
    assert.equal(svc.v3('apis/nothing.example.com/v1'), undefined);
    assert.equal(svc.v2(), svc.v2());
    assert.equal(svc.v2Protobuf(), svc.v2Protobuf());
  });

  it('index hashes change when content changes, and only for what changed', () => {
    const svc = new OpenAPIService(builtinResources());
    const before = JSON.parse(svc.v3Index().toString()).paths;
    assert.deepStrictEqual(Object.keys(before), svc.groupVersionPaths());
    const v1 = svc.v3('v1');
    svc.setResources([...builtinResources(), crd], {
      v2: crdSchemas('v2', 'cronSpec'),
      v3: crdSchemas('v3', 'cronSpec'),
    });
    const after = JSON.parse(svc.v3Index().toString()).paths;
    assert.ok(after['apis/stable.example.com/v1']);
    assert.equal(after['api/v1'].serverRelativeURL, before['api/v1'].serverRelativeURL);
    assert.equal(svc.v3('v1'), v1, 'core document kept');
    const cr = JSON.parse(svc.v3('apis/stable.example.com/v1')!.json.toString());
    assert.deepStrictEqual(allRefsResolve(cr, 'v3'), []);
    assert.ok(cr.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
    assert.ok(supportsFieldValidation(cr, { group: 'stable.example.com', version: 'v1', kind: 'CronTab' }));
    const list = cr.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'].get;
    assert.ok(
      !list.responses['200'].content['application/vnd.kubernetes.protobuf'],
      'no protobuf for custom resources',
    );
    const patch = cr.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].patch;
    assert.ok(!patch.requestBody.content['application/strategic-merge-patch+json']);

    // The CRD's schema changes: its document's hash changes, the others' do not.
    const crHash = after['apis/stable.example.com/v1'].serverRelativeURL;
    svc.setResources([...builtinResources(), crd], {
      v2: crdSchemas('v2', 'other'),
      v3: crdSchemas('v3', 'other'),
    });
    const again = JSON.parse(svc.v3Index().toString()).paths;
    assert.notEqual(again['apis/stable.example.com/v1'].serverRelativeURL, crHash);
    assert.equal(again['apis/apps/v1'].serverRelativeURL, after['apis/apps/v1'].serverRelativeURL);
    assert.ok(
      JSON.parse(svc.v2().json.toString()).definitions['com.example.stable.v1.CronTab'].properties.spec
        .properties.other,
    );
  });

  it('unresolved references in extra schemas fail loudly', () => {
    const bad = { 'x.Y': { type: 'object', properties: { a: { $ref: '#/definitions/x.Missing' } } } };
    assert.throws(() => buildOpenAPIV2([], bad), /x\.Missing/);
  });
});

describe('openapi and the ServerSideFieldValidation gate', () => {
  after(() => featureGates.reset());
  it('advertises fieldValidation only while the gate is on', () => {
    const patchOf = () => {
      const doc = buildOpenAPIV3('api/v1', builtinResources()) as Schema;
      return (doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch.parameters as Schema[]).map(
        (p) => p.name,
      );
    };
    featureGates.reset();
    assert.ok(!patchOf().includes('fieldValidation'));
    featureGates.set({ ServerSideFieldValidation: 'true' });
    assert.ok(patchOf().includes('fieldValidation'));
  });
});
