// The ValidatingAdmissionPolicy status controller against a real apiserver:
// policies get status.typeChecking from the served OpenAPI schemas of the
// kinds they match (built-in and custom), and status.observedGeneration.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import type { Client, KubeObject } from '../../../shared/client';
import { waitUntil } from '../../../shared/cluster/process';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { allControllers, ControllerSelection } from '../../app/controllers';
import { CONTROLLER_NAME, FIELD_MANAGER, POLICIES } from './controller';

function policy(name: string, validations: unknown[], rules = deploymentRules, extra: object = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: rules }, validations, ...extra },
  };
}
const deploymentRules = [
  { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['CREATE', 'UPDATE'] },
];

describe('controller-manager: validatingadmissionpolicy-status-controller', function () {
  this.timeout(90_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;
  const policies = () => client.resource(POLICIES);

  /** The policy once the controller has observed its current generation. */
  async function observed(name: string): Promise<KubeObject> {
    let p: KubeObject | undefined;
    await waitUntil(
      async () => {
        p = await policies().get(name);
        return (p.status?.observedGeneration ?? 0) === p.metadata.generation;
      },
      30_000,
      `status of ${name} to observe its generation`,
    );
    return p!;
  }

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, [CONTROLLER_NAME]);
    client = kcm.client;
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('is on by default under its kube-controller-manager name', () => {
    const sel = new ControllerSelection(allControllers());
    const d = allControllers().find((c) => c.name === CONTROLLER_NAME);
    assert.ok(d);
    assert.ok(sel.enabled(d, ['*']));
  });

  it('warns of an undefined field of apps/v1 Deployment, naming the expression and the kind', async () => {
    await policies().create(policy('replicaz', [{ expression: 'object.spec.replicaz > 1' }]));
    const p = await observed('replicaz');
    assert.equal(p.status.observedGeneration, 1);
    assert.deepEqual(p.status.typeChecking.expressionWarnings, [
      {
        fieldRef: 'spec.validations[0].expression',
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n" +
          ' | object.spec.replicaz > 1\n' +
          ' | ...........^\n',
      },
    ]);
    const manager = (p.metadata.managedFields as any[]).find((m) => m.subresource === 'status');
    assert.equal(manager?.manager, FIELD_MANAGER);
    assert.equal(manager?.operation, 'Apply');
  });

  it('writes no warnings for a correct policy, with observedGeneration = generation', async () => {
    await policies().create(
      policy('correct', [
        {
          expression: 'object.spec.replicas <= 10 && object.metadata.name.startsWith("a")',
          messageExpression: "'replicas: ' + string(object.spec.replicas)",
        },
      ]),
    );
    const p = await observed('correct');
    assert.equal(p.status.observedGeneration, p.metadata.generation);
    assert.deepEqual(p.status.typeChecking, {});
  });

  it('checks the policy again when it is updated', async () => {
    await policies().create(policy('updated', [{ expression: 'object.spec.replicas > 0' }]));
    let p = await observed('updated');
    assert.deepEqual(p.status.typeChecking, {});
    p.spec.validations = [
      { expression: 'object.spec.replicas > 0' },
      { expression: "object.spec.strategy.kind == 'x'" },
    ];
    await policies().update(p);
    p = await observed('updated');
    assert.equal(p.metadata.generation, 2);
    assert.equal(p.status.observedGeneration, 2);
    assert.equal(p.status.typeChecking.expressionWarnings.length, 1);
    assert.equal(p.status.typeChecking.expressionWarnings[0].fieldRef, 'spec.validations[1].expression');
    assert.match(p.status.typeChecking.expressionWarnings[0].warning, /undefined field 'kind'/);
  });

  it('types objects of a custom resource by its CRD schema, and params by the paramKind', async () => {
    await client.resource('customresourcedefinitions.apiextensions.k8s.io').create({
      metadata: { name: 'widgets.cel.example.com' },
      spec: {
        group: 'cel.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    });
    // The kind is served and in /openapi/v3 before the policy is written (the controller checks
    // each generation once, as kube's does).
    await waitUntil(
      async () => {
        const index = await client.rest.request<any>({ method: 'GET', path: '/openapi/v3' });
        return Boolean(index.paths?.['apis/cel.example.com/v1']);
      },
      30_000,
      'the CRD in /openapi/v3',
    );
    await policies().create(
      policy(
        'widgets',
        [
          { expression: "object.spec.size <= int(params.data['max'])" },
          { expression: 'object.spec.colour == "red"', messageExpression: 'params.dta.size()' },
        ],
        [
          {
            apiGroups: ['cel.example.com'],
            apiVersions: ['v1'],
            resources: ['widgets'],
            operations: ['CREATE'],
          },
        ],
        { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } },
      ),
    );
    const warnings = (await observed('widgets')).status.typeChecking.expressionWarnings ?? [];
    assert.deepEqual(
      warnings.map((w: any) => w.fieldRef),
      ['spec.validations[1].expression', 'spec.validations[1].messageExpression'],
    );
    assert.match(
      warnings[0].warning,
      /^cel\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'/,
    );
    assert.match(warnings[1].warning, /^cel\.example\.com\/v1, Kind=Widget: .*undefined field 'dta'/);
  });
});

describe('controller-manager: validatingadmissionpolicy-status-controller with RBAC', function () {
  this.timeout(90_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;

  before(async () => {
    srv = await startTestAPIServer({ authorizationMode: ['Node', 'RBAC'] });
    kcm = await startTestControllerManager(srv.kubeconfig, [CONTROLLER_NAME], {
      useServiceAccountCredentials: true,
    });
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('works as its own service account with the bootstrap role system:controller:<name>', async () => {
    const policies = kcm.client.resource(POLICIES);
    await policies.create(policy('rbac', [{ expression: 'object.spec.replicaz > 1' }]));
    let p: KubeObject | undefined;
    await waitUntil(
      async () => {
        p = await policies.get('rbac');
        return p.status?.observedGeneration === 1;
      },
      30_000,
      'status written under the service account',
    );
    assert.match(p!.status.typeChecking.expressionWarnings[0].warning, /undefined field 'replicaz'/);
    await kcm.client.resource('serviceaccounts').namespace('kube-system').get(CONTROLLER_NAME); // the account it ran as
  });
});
