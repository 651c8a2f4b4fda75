// ValidatingAdmissionPolicy over real HTTPS: a policy requiring a ConfigMap
// label taken from a param object, bound with Deny, Warn and Audit;
// matchConditions, variables, messageExpression, reason, failurePolicy.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const CMS = '/api/v1/namespaces/default/configmaps';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cm = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data: { a: '1' },
});

const POLICY = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'require-label' },
  spec: {
    failurePolicy: 'Fail',
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
      ],
    },
    matchConditions: [{ name: 'not-params', expression: "!object.metadata.name.startsWith('params-')" }],
    variables: [{ name: 'required', expression: 'params.data.label' }],
    validations: [
      {
        expression: 'has(object.metadata.labels) && variables.required in object.metadata.labels',
        messageExpression: "'missing label ' + variables.required",
      },
    ],
    auditAnnotations: [{ key: 'checked', valueExpression: "'label ' + variables.required" }],
  },
};

const binding = (name: string, actions: string[], paramName = 'params-team') => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: {
    policyName: 'require-label',
    validationActions: actions,
    paramRef: { name: paramName, namespace: 'default', parameterNotFoundAction: 'Deny' },
  },
});

describe('ValidatingAdmissionPolicy', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    const p = await api('POST', CMS, { body: { ...cm('params-team'), data: { label: 'team' } } });
    assert.equal(p.status, 201, JSON.stringify(p.json));
    const r = await api('POST', `${ADM}/validatingadmissionpolicies`, { body: POLICY });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
  });

  const bind = async (b: any) => {
    const r = await api('POST', `${ADM}/validatingadmissionpolicybindings`, { body: b });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await sleep(100); // the plugin reads bindings from the watch cache
    return () => api('DELETE', `${ADM}/validatingadmissionpolicybindings/${b.metadata.name}`);
  };

  it('Deny: refuses a ConfigMap without the label named by the param object, with 422 Invalid', async () => {
    const unbind = await bind(binding('deny', ['Deny']));
    try {
      const r = await api('POST', CMS, { body: cm('nolabel') });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Invalid');
      const cause =
        "ValidatingAdmissionPolicy 'require-label' with binding 'deny' denied request: missing label team";
      assert.equal(r.json.message, `configmaps "nolabel" is forbidden: ${cause}`);
      assert.deepEqual(r.json.details, {
        name: 'nolabel',
        kind: 'configmaps',
        causes: [{ message: cause }],
      });
      const ok = await api('POST', CMS, { body: cm('labelled', { team: 'x' }) });
      assert.equal(ok.status, 201, JSON.stringify(ok.json));
      // matchConditions: the param objects themselves are not checked.
      assert.equal((await api('POST', CMS, { body: cm('params-other') })).status, 201);
    } finally {
      await unbind();
    }
  });

  it('Warn: admits with a Warning header', async () => {
    const unbind = await bind(binding('warn', ['Warn']));
    try {
      const r = await api('POST', CMS, { body: cm('warned') });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      const warnings = [r.headers.warning].flat().join('\n');
      assert.match(
        warnings,
        /Validation failed for ValidatingAdmissionPolicy 'require-label' with binding 'warn': missing label team/,
      );
    } finally {
      await unbind();
    }
  });

  it('a missing param object with parameterNotFoundAction Deny refuses the request', async () => {
    const unbind = await bind(binding('noparam', ['Deny'], 'params-absent'));
    try {
      const r = await api('POST', CMS, { body: cm('whatever', { team: 'a' }) });
      assert.equal(r.status, 422);
      assert.match(
        r.json.message,
        /denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/,
      );
    } finally {
      await unbind();
    }
  });

  it('an expression error follows failurePolicy; a validation reason sets the status code', async () => {
    const pol = structuredClone(POLICY) as any;
    pol.metadata.name = 'broken';
    delete pol.spec.paramKind;
    delete pol.spec.variables;
    delete pol.spec.auditAnnotations;
    pol.spec.validations = [
      { expression: 'object.data.missing == "x"' },
      { expression: 'false', message: 'never', reason: 'Forbidden' },
    ];
    assert.equal((await api('POST', `${ADM}/validatingadmissionpolicies`, { body: pol })).status, 201);
    const unbind = await bind({
      ...binding('broken', ['Deny']),
      spec: { policyName: 'broken', validationActions: ['Deny'] },
    });
    try {
      let r = await api('POST', CMS, { body: cm('err1') });
      assert.equal(r.status, 422);
      assert.match(
        r.json.message,
        /expression 'object\.data\.missing == "x"' resulted in error: no such key: missing/,
      );
      pol.spec.failurePolicy = 'Ignore';
      const cur = (await api('GET', `${ADM}/validatingadmissionpolicies/broken`)).json;
      cur.spec.failurePolicy = 'Ignore';
      assert.equal(
        (await api('PUT', `${ADM}/validatingadmissionpolicies/broken`, { body: cur })).status,
        200,
      );
      await sleep(100);
      r = await api('POST', CMS, { body: cm('err2') });
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Forbidden');
      assert.match(r.json.message, /with binding 'broken' denied request: never$/);
    } finally {
      await unbind();
    }
  });

  it('refuses a policy whose expressions do not compile', async () => {
    const pol = structuredClone(POLICY) as any;
    pol.metadata.name = 'uncompilable';
    pol.spec.validations = [{ expression: 'object.' }, { expression: "'text'" }];
    pol.spec.matchConditions = [{ name: 'x', expression: 'nope == 1' }];
    const r = await api('POST', `${ADM}/validatingadmissionpolicies`, { body: pol });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    assert.ok(
      causes.some((c: string) =>
        c.startsWith(
          'spec.validations[0].expression: Invalid value: "object.": compilation failed: ERROR: <input>:1:8:',
        ),
      ),
      causes.join('\n'),
    );
    assert.ok(
      causes.includes(
        `spec.validations[1].expression: Invalid value: "'text'": cel expression must evaluate to a bool`,
      ),
      causes.join('\n'),
    );
    assert.ok(
      causes.some(
        (c: string) =>
          c.startsWith('spec.matchConditions[0].expression') && c.includes("undeclared reference to 'nope'"),
      ),
      causes.join('\n'),
    );
  });

  it('refuses a policy without matchConstraints resource rules, or with nothing to check', async () => {
    const refused = async (name: string, spec: any) => {
      const r = await api('POST', `${ADM}/validatingadmissionpolicies`, {
        body: { ...POLICY, metadata: { name }, spec },
      });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.reason, 'Invalid');
      return r.json.message;
    };
    const validations = [{ expression: 'false' }];
    assert.equal(
      await refused('no-match', { validations }),
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "no-match" is invalid: spec.matchConstraints: Required value',
    );
    assert.equal(
      await refused('no-rules', { matchConstraints: { namespaceSelector: {} }, validations }),
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "no-rules" is invalid: spec.matchConstraints.resourceRules: Required value',
    );
    const none = 'Required value: validations or auditAnnotations must contain at least one item';
    assert.equal(
      await refused('no-checks', { matchConstraints: POLICY.spec.matchConstraints }),
      `ValidatingAdmissionPolicy.admissionregistration.k8s.io "no-checks" is invalid: [spec.validations: ${none}, spec.auditAnnotations: ${none}]`,
    );
  });
});

describe('ValidatingAdmissionPolicy audit', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-vap-audit-'));
    writeFileSync(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n',
    );
    srv = await startTestAPIServer({
      auditPolicyFile: join(dir, 'policy.yaml'),
      auditLogPath: join(dir, 'audit.log'),
    });
    api = testRequester(srv.config);
    assert.equal(
      (await api('POST', CMS, { body: { ...cm('params-team'), data: { label: 'team' } } })).status,
      201,
    );
    assert.equal((await api('POST', `${ADM}/validatingadmissionpolicies`, { body: POLICY })).status, 201);
    assert.equal(
      (await api('POST', `${ADM}/validatingadmissionpolicybindings`, { body: binding('audit', ['Audit']) }))
        .status,
      201,
    );
    await sleep(100);
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("Audit: admits, and records the failure and the policy's audit annotations in the audit event", async () => {
    const r = await api('POST', CMS, { body: cm('audited') });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const id = String(r.headers['audit-id']);
    let event: any;
    for (let i = 0; i < 200 && !event; i++) {
      event = readFileSync(join(dir, 'audit.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((e) => e.auditID === id && e.stage === 'ResponseComplete');
      if (!event) await sleep(25);
    }
    assert.ok(event, 'audit event written');
    assert.deepEqual(JSON.parse(event.annotations['validation.policy.admission.k8s.io/validation_failure']), [
      {
        message: 'missing label team',
        policy: 'require-label',
        binding: 'audit',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
    assert.equal(event.annotations['require-label/checked'], 'label team');
  });
});
