// The policy type checker over the OpenAPI v3 documents the apiserver serves
// for built-in kinds (apps/v1, v1): which kinds a policy's rules select, and
// the warnings Kubernetes writes to status.typeChecking.
import assert from 'node:assert/strict';
import { builtinResources } from '../api/catalog';
import { buildOpenAPIV3 } from '../api/openapi';
import { kindSchema, SchemaNotFoundError, type GroupVersionKind } from './openapi-refs';
import { checkPolicy, typesToCheck, type PolicySchemaSource } from './policy-typecheck';

function builtinSource(): PolicySchemaSource & { refreshes: number } {
  const resources = builtinResources();
  const docs = new Map<string, unknown>();
  const doc = (gv: string) => {
    if (!docs.has(gv)) docs.set(gv, buildOpenAPIV3(gv, resources));
    return docs.get(gv);
  };
  return {
    refreshes: 0,
    async kindsFor(gvr) {
      const r = resources.find(
        (x) => x.group === gvr.group && x.version === gvr.version && x.resource === gvr.resource,
      );
      return r ? [{ group: r.group, version: r.version, kind: r.kind }] : undefined;
    },
    refresh() {
      this.refreshes++;
    },
    async schemaFor(gvk: GroupVersionKind) {
      try {
        return kindSchema(doc(gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version), gvk);
      } catch (e) {
        if (e instanceof SchemaNotFoundError) return undefined;
        throw e;
      }
    },
  };
}

const policy = (validations: unknown[], extra: Record<string, unknown> = {}) => ({
  spec: {
    matchConstraints: {
      resourceRules: [
        { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['*'] },
      ],
    },
    validations,
    ...extra,
  },
});

describe('cel: ValidatingAdmissionPolicy type checking', () => {
  it('resolves a kind with its refs expanded and its full ObjectMeta', async () => {
    const s = await builtinSource().schemaFor({ group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.equal(s?.properties.spec.properties.replicas.type, 'integer');
    assert.ok(s?.properties.metadata.properties.labels, 'metadata is the full ObjectMeta');
    const container = s?.properties.spec.properties.template.properties.spec.properties.containers.items;
    assert.equal(container.properties.image.type, 'string');
    // Quantities are strings and IntOrString dyn, as in Kubernetes' compiled definitions.
    assert.equal(container.properties.resources.properties.limits.additionalProperties.type, 'string');
    assert.equal(
      s?.properties.spec.properties.strategy.properties.rollingUpdate.properties.maxSurge.format,
      'int-or-string',
    );
  });

  it('warns of an undefined field with the kind and cel-go position', async () => {
    const w = await checkPolicy(policy([{ expression: 'object.spec.replicaz > 1' }]), builtinSource());
    assert.equal(w.length, 1);
    assert.equal(w[0].fieldRef, 'spec.validations[0].expression');
    assert.equal(
      w[0].warning,
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^\n",
    );
  });

  it('accepts correct expressions, typed metadata, request, namespaceObject and variables', async () => {
    const w = await checkPolicy(
      policy(
        [
          {
            expression: 'object.spec.replicas <= variables.max',
            messageExpression: "'too many: ' + object.metadata.name",
          },
          {
            expression:
              "has(object.metadata.labels) && request.userInfo.username != '' && namespaceObject.metadata.name != ''",
          },
          { expression: 'variables.images.all(i, i != "")' },
          {
            expression:
              "object.spec.strategy.rollingUpdate.maxSurge == 1 || object.spec.template.spec.containers.all(c, c.resources.limits['cpu'] != '')",
          },
        ],
        {
          variables: [
            { name: 'max', expression: '5' },
            { name: 'images', expression: 'object.spec.template.spec.containers.map(c, c.image)' },
          ],
        },
      ),
      builtinSource(),
    );
    assert.deepEqual(w, []);
  });

  it('types variables: a wrong use of one is a warning, as is a messageExpression error', async () => {
    const w = await checkPolicy(
      policy([{ expression: 'variables.max.size() > 0', messageExpression: 'object.spec.nope' }], {
        variables: [{ name: 'max', expression: '5' }],
      }),
      builtinSource(),
    );
    assert.deepEqual(
      w.map((x) => x.fieldRef),
      ['spec.validations[0].expression', 'spec.validations[0].messageExpression'],
    );
    assert.match(
      w[0].warning,
      /^apps\/v1, Kind=Deployment: ERROR: <input>:1:\d+: found no matching overload/,
    );
    assert.match(w[1].warning, /undefined field 'nope'/);
  });

  it('types a variable holding an object by that object type', async () => {
    const w = await checkPolicy(
      policy(
        [{ expression: "variables.first.image != ''" }, { expression: "variables.first.imagez != ''" }],
        {
          variables: [{ name: 'first', expression: 'object.spec.template.spec.containers[0]' }],
        },
      ),
      builtinSource(),
    );
    assert.deepEqual(
      w.map((x) => x.fieldRef),
      ['spec.validations[1].expression'],
    );
    assert.match(w[0].warning, /undefined field 'imagez'/);
  });

  it('types params by the paramKind; without a resolvable paramKind params is undeclared', async () => {
    const withParams = policy([{ expression: "object.spec.replicas < int(params.data['max'])" }], {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    });
    assert.deepEqual(await checkPolicy(withParams, builtinSource()), []);
    const typo = policy([{ expression: 'params.datta.size() > 0' }], {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    });
    assert.match((await checkPolicy(typo, builtinSource()))[0].warning, /undefined field 'datta'/);
    const none = policy([{ expression: 'params.data.size() > 0' }]);
    assert.match((await checkPolicy(none, builtinSource()))[0].warning, /undeclared reference to 'params'/);
  });

  it('checks each selected kind, sorted, and skips wildcards and subresources', async () => {
    const src = builtinSource();
    const p = {
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              resources: ['statefulsets', 'deployments', 'deployments/scale', '*'],
            },
            { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] },
            { apiGroups: ['*'], apiVersions: ['v1'], resources: ['configmaps'] },
            { apiGroups: ['batch'], apiVersions: ['*'], resources: ['jobs'] },
            { apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] },
          ],
        },
        validations: [{ expression: 'object.spec.replicas > 0' }],
      },
    };
    const kinds = (await typesToCheck(p, src)).map((g) => `${g.group}/${g.version}/${g.kind}`);
    assert.deepEqual(kinds, ['/v1/Pod', 'apps/v1/Deployment', 'apps/v1/StatefulSet']);
    assert.equal(src.refreshes, 1, 'an unknown resource refreshes discovery once');
    const [w] = await checkPolicy(p, src);
    // Pods have no spec.replicas: one message for Pod only, ending in a newline.
    assert.match(w.warning, /^\/v1, Kind=Pod: ERROR: <input>:1:12: undefined field 'replicas'\n/);
    assert.doesNotMatch(w.warning, /Deployment|StatefulSet/);
  });

  it('joins the messages of several kinds with a blank line between', async () => {
    const p = {
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'daemonsets'] },
          ],
        },
        validations: [{ expression: 'object.spec.foo' }],
      },
    };
    const [w] = await checkPolicy(p, builtinSource());
    const parts = w.warning.split('\n\n');
    assert.equal(parts.length, 2);
    assert.match(parts[0], /^apps\/v1, Kind=DaemonSet: ERROR/);
    assert.match(parts[1], /^apps\/v1, Kind=Deployment: ERROR/);
  });

  it('types the authorizer with the authz library', async () => {
    const w = await checkPolicy(
      policy([
        {
          expression:
            "authorizer.group('apps').resource('deployments').namespace('x').check('create').allowed()",
        },
        { expression: "authorizer.requestResource.check('update').reason() != ''" },
        { expression: "authorizer.group('apps').resource('deployments').check('create').allowd()" },
      ]),
      builtinSource(),
    );
    assert.deepEqual(
      w.map((x) => x.fieldRef),
      ['spec.validations[2].expression'],
    );
  });
});
