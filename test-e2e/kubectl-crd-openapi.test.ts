// Every kubectl from 1.27 to 1.33 (the one on PATH and the kubectl.1.<minor>
// beside it) reads a CRD's published OpenAPI as it reads Kubernetes': client-side
// validation takes free-form data under x-kubernetes-preserve-unknown-fields
// (at the root, in a subtree, in an embedded object) and still refuses unknown
// fields where the schema is closed; `kubectl explain` of metadata reads ObjectMeta.
// Each kubectl.1.<minor> missing from this machine is left out (the test names those it ran).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { startAPIServerProcess, tempDir, type APIServerProc } from './support/processes';
import { kubectl, kubectlAvailable, kubectlVersions } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';

const crd = (kind: string, plural: string, schema: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.t.example.com
spec:
  group: t.example.com
  scope: Namespaced
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
${schema
  .split('\n')
  .map((l) => '        ' + l)
  .join('\n')}
`;

const LOOSE = crd('Loose', 'looses', 'type: object\nx-kubernetes-preserve-unknown-fields: true');
const HOLDER = crd(
  'Holder',
  'holders',
  `type: object
properties:
  spec:
    type: object
    properties:
      size: {type: integer}
      free:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          known: {type: string}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
      maybe:
        type: object
        nullable: true
        properties:
          x: {type: string}`,
);

describe('kubectl 1.27–1.33 with CRD OpenAPI', function () {
  this.timeout(300_000);
  let srv: APIServerProc;
  let cacheDir: string;
  const binaries = kubectlAvailable() ? ['kubectl', ...kubectlVersions()] : [];

  before(async function () {
    if (!binaries.length) {
      console.warn('kubectl not found on PATH: skipping the kubectl CRD OpenAPI tests');
      this.skip();
    }
    cacheDir = tempDir('kubectl-cache');
    srv = await startAPIServerProcess();
    for (const doc of [LOOSE, HOLDER]) {
      const r = await kubectl(srv.kubeconfig, ['apply', '-f', '-'], { input: doc });
      assert.equal(r.code, 0, r.stderr);
    }
    for (const c of ['looses', 'holders'])
      await waitUntil(
        async () => (await kubectl(srv.kubeconfig, ['get', c])).code === 0,
        20_000,
        `${c} served`,
      );
  });
  after(async () => {
    await srv?.cleanup();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('runs with every kubectl version found', () => {
    console.log(`      kubectl binaries: ${binaries.map((b) => basename(b)).join(', ')}`);
    assert.ok(binaries.length >= 1);
  });

  for (const [i, bin] of ['kubectl', ...kubectlVersions()].entries()) {
    const name = basename(bin);
    const run = (args: string[], input?: string) =>
      kubectl(srv.kubeconfig, ['--cache-dir', `${cacheDir}/${i}`, ...args], { input, binary: bin });

    it(`${name}: applies free-form data under preserve-unknown-fields, refuses it where closed`, async () => {
      const loose = `apiVersion: t.example.com/v1\nkind: Loose\nmetadata: {name: l${i}}\na: {b: [{c: d}]}\n`;
      let r = await run(['apply', '-f', '-'], loose);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      const holder = `apiVersion: t.example.com/v1
kind: Holder
metadata: {name: h${i}}
spec:
  size: 3
  free: {known: k, other: {deep: [{c: d}]}}
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: inner}
    data: {a: {b: [{c: d}]}}
  maybe: null
`;
      r = await run(['apply', '-f', '-'], holder);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      r = await run(
        ['apply', '--validate=strict', '-f', '-'],
        holder.replace('size: 3', 'size: 3\n  nope: 1'),
      );
      assert.notEqual(r.code, 0, `${name} accepted an unknown field`);
      assert.match(r.stderr, /unknown field "spec\.nope"|nope/);
      const got = await run(['get', 'holder', `h${i}`, '-o', 'jsonpath={.spec.free.other.deep[0].c}']);
      assert.equal(got.stdout, 'd');
    });

    it(`${name}: explains a custom resource's metadata as ObjectMeta`, async () => {
      const r = await run(['explain', 'holder.metadata']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.match(r.stdout, /KIND:\s+Holder/);
      assert.match(r.stdout, /FIELD:\s+metadata\s+<ObjectMeta>/);
      assert.match(r.stdout, /Standard object's metadata\./);
      // The fields of ObjectMeta with Kubernetes' types (tkube publishes no Go doc prose).
      for (const field of [
        /\n\s+name\s+<string>/,
        /\n\s+labels\s+<map\[string\]string>/,
        /\n\s+creationTimestamp\s+<string>/,
        /\n\s+managedFields\s+<\[\]ManagedFieldsEntry>/,
        /\n\s+ownerReferences\s+<\[\]OwnerReference>/,
      ])
        assert.match(r.stdout, field, name);
      const loose = await run(['explain', 'loose']);
      assert.equal(loose.code, 0, `${name}: ${loose.stderr}`);
      assert.match(loose.stdout, /KIND:\s+Loose/);
    });
  }
});
