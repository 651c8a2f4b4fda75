// Field selectors on custom resources (apiextensions' ConvertFieldLabel): each version accepts
// metadata.name, metadata.namespace when namespaced, and its own selectableFields only.
import assert from 'node:assert/strict';
import { withTestAPIServer } from '../../server/testing';
import { WIDGET_SCHEMA, crd, establish } from './test-support';

const q = (sel: string) => `fieldSelector=${encodeURIComponent(sel)}`;

describe('custom resource field selectors', function () {
  this.timeout(60_000);

  it("accepts a version's own selectable fields only, and filters on them", () =>
    withTestAPIServer({}, async (api) => {
      const version = (name: string, storage: boolean, selectable: string[]) => ({
        name,
        served: true,
        storage,
        schema: { openAPIV3Schema: WIDGET_SCHEMA },
        selectableFields: selectable.map((jsonPath) => ({ jsonPath })),
      });
      await establish(
        api,
        crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, [])] }),
      );
      for (const [name, color] of [
        ['w-red', 'red'],
        ['w-blue', 'blue'],
      ]) {
        const r = await api('POST', '/apis/example.com/v1/namespaces/default/widgets', {
          body: {
            apiVersion: 'example.com/v1',
            kind: 'Widget',
            metadata: { name },
            spec: { size: 1, color },
          },
        });
        assert.equal(r.status, 201, JSON.stringify(r.json));
      }
      const v1 = await api('GET', `/apis/example.com/v1/namespaces/default/widgets?${q('spec.color=blue')}`);
      assert.equal(v1.status, 200);
      assert.deepEqual(
        v1.json.items.map((i: any) => i.metadata.name),
        ['w-blue'],
      );
      const v2 = await api('GET', `/apis/example.com/v2/namespaces/default/widgets?${q('spec.color=blue')}`);
      assert.equal(v2.status, 400);
      assert.equal(v2.json.message, 'field label not supported: spec.color');
      const ns = await api('GET', `/apis/example.com/v2/widgets?${q('metadata.namespace=default')}`);
      assert.equal(ns.status, 200);
      assert.equal(ns.json.items.length, 2);
    }));

  it('refuses metadata.namespace on a cluster-scoped kind', () =>
    withTestAPIServer({}, async (api) => {
      await establish(api, crd({ scope: 'Cluster', plural: 'gadgets', kind: 'Gadget' }));
      const r = await api('GET', `/apis/example.com/v1/gadgets?${q('metadata.namespace=x')}`);
      assert.equal(r.status, 400);
      assert.equal(r.json.message, 'field label not supported: metadata.namespace');
      assert.equal((await api('GET', `/apis/example.com/v1/gadgets?${q('metadata.name=x')}`)).status, 200);
    }));
});
