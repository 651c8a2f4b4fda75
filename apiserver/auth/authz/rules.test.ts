// RBAC rule semantics and ABAC policy parsing, without a server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { breakdownRule, compactRules, compactString, covers, ruleAllows, type PolicyRule } from './rules';
import { ABACAuthorizer, loadPolicyFile, parsePolicy } from './abac';
import type { Attributes } from './types';

const attrs = (o: Partial<Attributes>): Attributes => ({
  user: { name: 'u', groups: [] },
  verb: 'get',
  isResourceRequest: true,
  path: '',
  namespace: 'default',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  name: '',
  ...o,
});

describe('RBAC rules', () => {
  it('matches verbs, groups, resources, subresources, names and URLs with wildcards', () => {
    const r: PolicyRule = {
      verbs: ['get'],
      apiGroups: [''],
      resources: ['pods', 'pods/log'],
      resourceNames: ['a'],
    };
    assert.ok(ruleAllows(attrs({ name: 'a' }), r));
    assert.ok(!ruleAllows(attrs({ name: 'b' }), r));
    assert.ok(!ruleAllows(attrs({ name: '' }), r), 'a named rule does not allow collection reads');
    assert.ok(ruleAllows(attrs({ name: 'a', subresource: 'log' }), r));
    assert.ok(!ruleAllows(attrs({ name: 'a', subresource: 'exec' }), r));
    assert.ok(!ruleAllows(attrs({ name: 'a', apiGroup: 'apps' }), r));
    const star: PolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*/scale'] };
    assert.ok(
      ruleAllows(
        attrs({ resource: 'deployments', subresource: 'scale', apiGroup: 'apps', verb: 'update' }),
        star,
      ),
    );
    assert.ok(!ruleAllows(attrs({ resource: 'deployments', apiGroup: 'apps' }), star));
    const url: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    const nr = (path: string, verb = 'get') => attrs({ isResourceRequest: false, path, verb });
    assert.ok(ruleAllows(nr('/healthz'), url));
    assert.ok(!ruleAllows(nr('/healthz/ping'), url));
    assert.ok(ruleAllows(nr('/apis/apps/v1'), url));
    assert.ok(!ruleAllows(nr('/apis'), url));
    assert.ok(!ruleAllows(nr('/healthz', 'post'), url));
  });

  it('decides coverage like escalation prevention does', () => {
    const owner: PolicyRule[] = [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['*/scale'] },
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
    ];
    assert.ok(covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]).covered);
    assert.ok(
      covers(owner, [{ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'] }]).covered,
    );
    assert.ok(
      covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }])
        .covered,
    );
    assert.ok(!covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]).covered);
    assert.ok(covers(owner, [{ verbs: ['get'], nonResourceURLs: ['/logs/x'] }]).covered);
    const { covered, missing } = covers(owner, [
      { verbs: ['get', 'delete'], apiGroups: ['', 'apps'], resources: ['pods'] },
    ]);
    assert.ok(!covered);
    assert.deepEqual(compactRules(missing).map(compactString).sort(), [
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
      '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}',
    ]);
    assert.equal(
      breakdownRule({ verbs: ['a', 'b'], apiGroups: [''], resources: ['x'], resourceNames: ['n1', 'n2'] })
        .length,
      4,
    );
  });
});

describe('ABAC policies', () => {
  it('converts v0 and v1beta1 policies like Kubernetes', () => {
    assert.deepEqual(parsePolicy('{"user":"alice","readonly":true,"resource":"pods"}', 1, 'f'), {
      user: 'alice',
      group: '',
      namespace: '*',
      resource: 'pods',
      readonly: true,
      apiGroup: '*',
    });
    assert.deepEqual(parsePolicy('{}', 1, 'f').group, 'system:authenticated');
    const star = parsePolicy(
      '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"*","nonResourcePath":"*"}}',
      1,
      'f',
    );
    assert.equal(star.user, '');
    assert.equal(star.group, 'system:authenticated');
    assert.throws(() => parsePolicy('{"apiVersion":"v2","kind":"Policy"}', 3, 'f'), /line 3/);
  });

  it('loads a policy file (comments, blank lines) and authorizes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tkube-abac-'));
    try {
      const file = join(dir, 'p.jsonl');
      writeFileSync(
        file,
        '# comment\n\n{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:unauthenticated","readonly":true,"nonResourcePath":"/version"}}\n',
      );
      const z = new ABACAuthorizer(loadPolicyFile(file));
      const anon = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
      assert.equal(
        z.authorize(attrs({ user: anon, isResourceRequest: false, path: '/version' })).decision,
        'allow',
      );
      assert.equal(
        z.authorize(attrs({ user: anon, isResourceRequest: false, path: '/version', verb: 'post' })).decision,
        'noopinion',
      );
      assert.equal(z.authorize(attrs({ user: anon })).reason, 'No policy matched.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
