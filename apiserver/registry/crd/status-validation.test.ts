// Status writes validated as Kubernetes validates them, no more: a CRD's own
// status strategy checks acceptedNames only, a Deployment's leaves conditions
// alone, while a custom resource's status still meets its CRD's schema.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';

describe('status subresources: validation as in Kubernetes', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const addConditions = [{ op: 'add', path: '/status/conditions', value: [{ message: 'patched' }] }];
  const jsonPatch = 'application/json-patch+json';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const crd = (plural: string, kind: string, conditionRequired: string[]) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.t.example.com` },
    spec: {
      group: 't.example.com',
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                status: {
                  type: 'object',
                  properties: {
                    conditions: {
                      type: 'array',
                      items: {
                        type: 'object',
                        ...(conditionRequired.length ? { required: conditionRequired } : {}),
                        properties: {
                          type: { type: 'string' },
                          status: { type: 'string' },
                          message: { type: 'string' },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });

  const served = async (path: string) => {
    for (let i = 0; i < 100; i++) {
      if ((await api('GET', path)).status === 200) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${path} not served`);
  };

  it("accepts conditions without type and status on a CRD's status (only acceptedNames is checked)", async () => {
    assert.equal((await api('POST', crds, { body: crd('loosecs', 'LooseC', []) })).status, 201);
    const r = await api('PATCH', `${crds}/loosecs.t.example.com/status`, {
      body: addConditions,
      contentType: jsonPatch,
    });
    assert.equal(r.status, 200, r.body.toString().slice(0, 300));
    // Written as Go writes the condition struct: type and status are not omitempty.
    assert.equal(
      JSON.stringify(r.json.status.conditions),
      '[{"type":"","status":"","lastTransitionTime":null,"message":"patched"}]',
    );
    const bad = await api('PATCH', `${crds}/loosecs.t.example.com/status`, {
      body: [{ op: 'replace', path: '/status/acceptedNames/plural', value: 'Not_A_Label' }],
      contentType: jsonPatch,
    });
    assert.equal(bad.status, 422);
    assert.match(bad.json.message, /status\.acceptedNames\.plural: Invalid value/);
  });

  it("holds a custom resource's status to its schema, and only to it", async () => {
    assert.equal(
      (await api('POST', crds, { body: crd('strictcs', 'StrictC', ['type', 'status']) })).status,
      201,
    );
    assert.equal((await api('POST', crds, { body: crd('freecs', 'FreeC', []) })).status, 201);
    for (const [plural, kind, code] of [
      ['strictcs', 'StrictC', 422],
      ['freecs', 'FreeC', 200],
    ] as const) {
      const base = `/apis/t.example.com/v1/namespaces/default/${plural}`;
      await served(base);
      const body = { apiVersion: 't.example.com/v1', kind, metadata: { name: 'x' }, status: {} };
      assert.equal((await api('POST', base, { body })).status, 201);
      const r = await api('PATCH', `${base}/x/status`, {
        body: [{ op: 'add', path: '/status', value: {} }, ...addConditions],
        contentType: jsonPatch,
      });
      assert.equal(r.status, code, `${kind}: ${r.body.toString().slice(0, 300)}`);
      if (code === 422) assert.match(r.json.message, /status\.conditions\[0\]\.type: Required value/);
    }
  });

  it("leaves a Deployment's status conditions to its status strategy", async () => {
    const deploys = '/apis/apps/v1/namespaces/default/deployments';
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    assert.equal((await api('POST', deploys, { body: d })).status, 201);
    const r = await api('PATCH', `${deploys}/d/status`, {
      body: [{ op: 'add', path: '/status', value: { conditions: [{ message: 'patched' }] } }],
      contentType: jsonPatch,
    });
    assert.equal(r.status, 200, r.body.toString().slice(0, 300));
  });
});
