// MutatingAdmissionPolicy over real HTTPS: JSONPatch and ApplyConfiguration
// mutations, param objects, matchConditions, failurePolicy, reinvocation,
// dry-run and server-side apply requests, custom resources (validation:
// mutating-policy-strategy.test.ts).
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const CMS = '/api/v1/namespaces/default/configmaps';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cm = (name: string, data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

const rules = (resources: string[], group = '') => ({
  resourceRules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources }],
});

const policy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingAdmissionPolicy',
  metadata: { name },
  spec: { matchConstraints: rules(['configmaps']), reinvocationPolicy: 'Never', ...spec },
});

const jsonPatch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const applyConfig = (expression: string) => ({
  patchType: 'ApplyConfiguration',
  applyConfiguration: { expression },
});

/** Adds one label (the key escaped for the JSON pointer), creating metadata.labels when absent. */
const addLabel = (key: string, value: string) =>
  jsonPatch(`has(object.metadata.labels)
    ? [JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("${key}"), value: ${value}}]
    : [JSONPatch{op: "add", path: "/metadata/labels", value: {"${key}": ${value}}}]`);

describe('MutatingAdmissionPolicy', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;

  before(async () => {
    // Every default plugin, ServiceAccount too (the pod test creates the "default" ServiceAccount).
    srv = await startTestAPIServer({ disableAdmissionPlugins: [] });
    api = testRequester(srv.config);
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
  });

  const create = async (path: string, body: any) => {
    const r = await api('POST', path, { body });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    return r.json;
  };

  /** Updates a policy and waits until the watch cache the plugin reads from has the new version. */
  const updatePolicy = async (name: string, change: (spec: any) => void) => {
    const cur = (await api('GET', `${ADM}/mutatingadmissionpolicies/${name}`)).json;
    change(cur.spec);
    const r = await api('PUT', `${ADM}/mutatingadmissionpolicies/${name}`, { body: cur });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    for (let i = 0; i < 400; i++) {
      const c = await api('GET', `${ADM}/mutatingadmissionpolicies/${name}?resourceVersion=0`);
      if (c.json.metadata.resourceVersion === r.json.metadata.resourceVersion) return;
      await sleep(25);
    }
  };

  /** Creates policy and binding, waits until the watch cache the plugin lists from has the binding. */
  const install = async (pol: any, binding: Record<string, unknown> = {}) => {
    await create(`${ADM}/mutatingadmissionpolicies`, pol);
    const name = `${pol.metadata.name}-binding`;
    await create(`${ADM}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: pol.metadata.name, ...binding },
    });
    for (let i = 0; i < 400; i++) {
      const l = await api('GET', `${ADM}/mutatingadmissionpolicybindings?resourceVersion=0`);
      if (l.json.items.some((b: any) => b.metadata.name === name)) break;
      await sleep(25);
    }
    return async () => {
      await api('DELETE', `${ADM}/mutatingadmissionpolicybindings/${name}`);
      await api('DELETE', `${ADM}/mutatingadmissionpolicies/${pol.metadata.name}`);
      for (let i = 0; i < 400; i++) {
        const l = await api('GET', `${ADM}/mutatingadmissionpolicybindings?resourceVersion=0`);
        if (!l.json.items.some((b: any) => b.metadata.name === name)) break;
        await sleep(25);
      }
    };
  };

  it('JSONPatch: adds a label taken from a param object, on create, dry-run and server-side apply', async () => {
    await create(CMS, cm('params-label', { value: 'from-param' }));
    const remove = await install(
      policy('add-label', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConditions: [{ name: 'not-params', expression: "!object.metadata.name.startsWith('params-')" }],
        variables: [{ name: 'value', expression: 'params.data.value' }],
        mutations: [addLabel('example.com/mutated', 'variables.value')],
      }),
      { paramRef: { name: 'params-label', namespace: 'default', parameterNotFoundAction: 'Deny' } },
    );
    try {
      const made = await create(CMS, cm('plain'));
      assert.deepEqual(made.metadata.labels, { 'example.com/mutated': 'from-param' });
      const stored = (await api('GET', `${CMS}/plain`)).json;
      assert.deepEqual(stored.metadata.labels, { 'example.com/mutated': 'from-param' });
      // Not owned by any manager: the field manager runs before admission.
      const owned = JSON.stringify(stored.metadata.managedFields);
      assert.ok(!owned.includes('example.com/mutated'), owned);

      // An update that drops the label gets it back.
      const put = await api('PUT', `${CMS}/plain`, {
        body: { ...cm('plain', { a: '2' }), metadata: { name: 'plain' } },
      });
      assert.equal(put.status, 200, JSON.stringify(put.json));
      assert.deepEqual(put.json.metadata.labels, { 'example.com/mutated': 'from-param' });
      assert.deepEqual(put.json.data, { a: '2' });

      const labelled = await create(CMS, cm('labelled', { a: '1' }, { team: 'x' }));
      assert.deepEqual(labelled.metadata.labels, { team: 'x', 'example.com/mutated': 'from-param' });

      const dry = await api('POST', `${CMS}?dryRun=All`, { body: cm('dry') });
      assert.equal(dry.status, 201, JSON.stringify(dry.json));
      assert.equal(dry.json.metadata.labels['example.com/mutated'], 'from-param');

      const applied = await api('PATCH', `${CMS}/ssa?fieldManager=test`, {
        body: JSON.stringify(cm('ssa', { b: '2' })),
        contentType: 'application/apply-patch+yaml',
      });
      assert.equal(applied.status, 201, JSON.stringify(applied.json));
      assert.equal(applied.json.metadata.labels['example.com/mutated'], 'from-param');

      // matchConditions: the param objects themselves are left alone.
      const skipped = await create(CMS, cm('params-other'));
      assert.equal(skipped.metadata.labels, undefined);
    } finally {
      await remove();
    }
  });

  it('a missing param object with parameterNotFoundAction Deny refuses the request', async () => {
    const remove = await install(
      policy('needs-param', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        mutations: [addLabel('x', '"y"')],
      }),
      { paramRef: { name: 'absent', namespace: 'default', parameterNotFoundAction: 'Deny' } },
    );
    try {
      const r = await api('POST', CMS, { body: cm('no-param') });
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Forbidden');
      assert.equal(
        r.json.message,
        "policy 'needs-param' with binding 'needs-param-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
      );
    } finally {
      await remove();
    }
  });

  it('ApplyConfiguration: merges ConfigMap data and sets Deployment replicas', async () => {
    const removeCm = await install(
      policy('merge-data', {
        mutations: [applyConfig('Object{data: {"added": "yes", "a": "replaced"}}')],
      }),
    );
    const removeDeploy = await install(
      policy('scale', {
        matchConstraints: rules(['deployments'], 'apps'),
        mutations: [
          applyConfig(
            'Object{spec: Object.spec{replicas: 5, template: Object.spec.template{metadata: ' +
              'Object.spec.template.metadata{labels: {"mutated": "true"}}}}}',
          ),
          // containers is a list keyed by name: the sidecar is merged in beside the existing one.
          applyConfig(
            'Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{' +
              'containers: [Object.spec.template.spec.containers{name: "sidecar", image: "busybox"}]}}}}',
          ),
        ],
      }),
    );
    try {
      const made = await create(CMS, cm('merged', { a: '1', keep: 'k' }));
      assert.deepEqual(made.data, { a: 'replaced', keep: 'k', added: 'yes' });
      const d = await create(DEPLOYS, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      });
      assert.equal(d.spec.replicas, 5);
      assert.deepEqual(d.spec.template.metadata.labels, { app: 'web', mutated: 'true' });
      const containers = d.spec.template.spec.containers;
      assert.deepEqual(
        containers.map((c: any) => [c.name, c.image]),
        [
          ['c', 'nginx'],
          ['sidecar', 'busybox'],
        ],
      );
      // The mutated object is defaulted again, as Kubernetes defaults it after each mutation.
      assert.equal(containers[1].terminationMessagePath, '/dev/termination-log');
      assert.equal(containers[1].imagePullPolicy, 'Always');
    } finally {
      await removeCm();
      await removeDeploy();
    }
  });

  it('ApplyConfiguration: setting an atomic list is refused, as Kubernetes refuses it', async () => {
    const remove = await install(
      policy('atomic', {
        matchConstraints: rules(['deployments'], 'apps'),
        mutations: [
          applyConfig(
            'Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{' +
              'containers: [Object.spec.template.spec.containers{name: "c", args: ["x"]}]}}}}',
          ),
        ],
      }),
    );
    try {
      const r = await api('POST', DEPLOYS, {
        body: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'atomic' },
          spec: {
            selector: { matchLabels: { app: 'a' } },
            template: {
              metadata: { labels: { app: 'a' } },
              spec: { containers: [{ name: 'c', image: 'i' }] },
            },
          },
        },
      });
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Invalid');
      assert.equal(
        r.json.message,
        "policy 'atomic' with binding 'atomic-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[name=\"c\"].args",
      );
    } finally {
      await remove();
    }
  });

  it('an expression error refuses the request under failurePolicy Fail and is skipped under Ignore', async () => {
    const pol = policy('broken', {
      failurePolicy: 'Fail',
      mutations: [jsonPatch('[JSONPatch{op: "add", path: "/data/x", value: object.data.missing}]')],
    });
    const remove = await install(pol);
    try {
      const r = await api('POST', CMS, { body: cm('fails') });
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Invalid');
      const message =
        "policy 'broken' with binding 'broken-binding' denied request: expression '[JSONPatch{op: \"add\", path: \"/data/x\", value: object.data.missing}]' resulted in error: no such key: missing";
      assert.equal(r.json.message, message);
      assert.deepEqual(r.json.details, { name: 'fails', kind: 'configmaps', causes: [{ message }] });

      await updatePolicy('broken', (spec) => (spec.failurePolicy = 'Ignore'));
      const ok = await create(CMS, cm('ignored'));
      assert.deepEqual(ok.data, { a: '1' });
    } finally {
      await remove();
    }
  });

  it('a failed JSONPatch operation is an error; a failed test operation leaves the object unchanged', async () => {
    const remove = await install(
      policy('patch-ops', {
        mutations: [
          jsonPatch(
            '[JSONPatch{op: "test", path: "/data/a", value: "other"}, JSONPatch{op: "remove", path: "/data/a"}]',
          ),
          jsonPatch('object.metadata.name == "bad-op" ? [JSONPatch{op: "remove", path: "/data/nope"}] : []'),
          jsonPatch(
            'object.metadata.name == "bad-field" ? [JSONPatch{op: "add", path: "/datum", value: 1}] : []',
          ),
          jsonPatch(
            'object.metadata.name == "bad-type" ? [JSONPatch{op: "add", path: "/data/n", value: 1}] : []',
          ),
        ],
      }),
    );
    try {
      const kept = await create(CMS, cm('test-op'));
      assert.deepEqual(kept.data, { a: '1' });
      const r = await api('POST', CMS, { body: cm('bad-op') });
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(
        r.json.message,
        "policy 'patch-ops' with binding 'patch-ops-binding' denied request: JSON Patch: Unable to remove nonexistent key: nope: missing value",
      );
      // The patched object is decoded strictly into its Go type: an internal error, not a policy failure.
      const unknown = await api('POST', CMS, { body: cm('bad-field') });
      assert.equal(unknown.status, 500, JSON.stringify(unknown.json));
      assert.equal(
        unknown.json.message,
        'Internal error occurred: strict decoding error: unknown field "datum"',
      );
      const wrongType = await api('POST', CMS, { body: cm('bad-type') });
      assert.equal(wrongType.status, 500, JSON.stringify(wrongType.json));
      assert.equal(
        wrongType.json.message,
        'Internal error occurred: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
      );
    } finally {
      await remove();
    }
  });

  it('reinvocationPolicy IfNeeded runs a policy again after a later policy changed the object', async () => {
    // "first" sorts before "second": it runs first, before the label exists.
    const seen = `has(object.metadata.labels) && "added" in object.metadata.labels ? "yes" : "no"`;
    const first = policy('first', {
      reinvocationPolicy: 'IfNeeded',
      mutations: [
        jsonPatch(`has(object.metadata.annotations)
          ? [JSONPatch{op: "add", path: "/metadata/annotations/seen", value: ${seen}}]
          : [JSONPatch{op: "add", path: "/metadata/annotations", value: {"seen": ${seen}}}]`),
      ],
    });
    const removeFirst = await install(first);
    const removeSecond = await install(policy('second', { mutations: [addLabel('added', '"1"')] }));
    try {
      const again = await create(CMS, cm('reinvoked'));
      assert.equal(again.metadata.annotations.seen, 'yes');
      assert.deepEqual(again.metadata.labels, { added: '1' });

      await updatePolicy('first', (spec) => (spec.reinvocationPolicy = 'Never'));
      const once = await create(CMS, cm('not-reinvoked'));
      assert.equal(once.metadata.annotations.seen, 'no');
    } finally {
      await removeFirst();
      await removeSecond();
    }
  });

  it('the reinvoked mutating phase leaves the other plugins idempotent (a pod keeps one token volume)', async () => {
    const sa = await api('POST', '/api/v1/namespaces/default/serviceaccounts', {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
    });
    assert.ok(sa.status === 201 || sa.status === 409, JSON.stringify(sa.json));
    const remove = await install(
      policy('label-pods', { matchConstraints: rules(['pods']), mutations: [addLabel('stamped', '"yes"')] }),
    );
    try {
      const pod = await create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      assert.deepEqual(pod.metadata.labels, { stamped: 'yes' });
      const tokenVolumes = pod.spec.volumes.filter((v: any) => v.name.startsWith('kube-api-access-'));
      assert.equal(tokenVolumes.length, 1, JSON.stringify(pod.spec.volumes));
      assert.equal(pod.spec.containers[0].volumeMounts.length, 1);
    } finally {
      await remove();
    }
  });

  it('mutates custom resources by their structural schema (list sets merged, defaults applied)', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.map.example.com' },
      spec: {
        group: 'map.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                      size: { type: 'string', default: 'small' },
                      tier: { type: 'string' },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const widgets = '/apis/map.example.com/v1/namespaces/default/widgets';
    for (let i = 0; i < 400 && (await api('GET', widgets)).status !== 200; i++) await sleep(25);
    const remove = await install(
      policy('tag-widgets', {
        matchConstraints: rules(['widgets'], 'map.example.com'),
        mutations: [
          applyConfig('Object{spec: Object.spec{tags: ["mutated"]}}'),
          // Removing a defaulted field: the defaults are applied again after the mutation.
          jsonPatch(
            '[JSONPatch{op: "remove", path: "/spec/size"}, JSONPatch{op: "add", path: "/spec/tier", value: "gold"}]',
          ),
        ],
      }),
    );
    try {
      const w = await create(widgets, {
        apiVersion: 'map.example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w' },
        spec: { tags: ['mine'] },
      });
      assert.deepEqual(w.spec, { tags: ['mine', 'mutated'], size: 'small', tier: 'gold' });
    } finally {
      await remove();
    }
  });
});
