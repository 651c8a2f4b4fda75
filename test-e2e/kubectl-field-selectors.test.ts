// The installed kubectl's --field-selector against a real apiserver process: the labels
// Kubernetes serves beyond metadata.* (CSRs' signer, the scheduler's events by source and
// through events.k8s.io's names), and Kubernetes' refusals as kubectl prints them.
import assert from 'node:assert/strict';
import { startAPIServerProcess, type APIServerProc } from './support/processes';
import { kubectl, kubectlAvailable, kubectlOk } from './support/kubectl';

const REQUEST = Buffer.from(
  '-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n',
).toString('base64');
const csr = (name: string, signer: string) => `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec: {request: ${REQUEST}, signerName: ${signer}, usages: [client auth]}
`;
// The scheduler writes events.k8s.io Events: no source, a reporting controller.
const SCHEDULER_EVENT = `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.scheduled}
eventTime: "2026-01-01T00:00:00.000000Z"
action: Binding
reason: Scheduled
type: Normal
regarding: {kind: Pod, name: web, namespace: default}
reportingController: default-scheduler
reportingInstance: default-scheduler-1
`;
const KUBELET_EVENT = `apiVersion: v1
kind: Event
metadata: {name: web.pulled}
involvedObject: {kind: Pod, name: web, namespace: default}
reason: Pulled
type: Normal
source: {component: kubelet}
`;

describe('kubectl --field-selector', function () {
  this.timeout(120_000);
  let srv: APIServerProc;
  const k = (...args: string[]) => kubectl(srv.kubeconfig, args);
  const ok = async (...args: string[]) => (await kubectlOk(srv.kubeconfig, args)).trim();
  const apply = (yaml: string) => kubectl(srv.kubeconfig, ['create', '-f', '-'], { input: yaml });

  before(async function () {
    if (!kubectlAvailable()) {
      console.warn('kubectl not found on PATH: skipping the kubectl field selector tests');
      this.skip();
    }
    srv = await startAPIServerProcess();
    for (const y of [
      csr('csr-a', 'example.com/a'),
      csr('csr-b', 'example.com/b'),
      SCHEDULER_EVENT,
      KUBELET_EVENT,
    ]) {
      const r = await apply(y);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => {
    await srv?.cleanup();
  });

  it('selects CertificateSigningRequests by spec.signerName', async () => {
    assert.equal(
      await ok('get', 'csr', '--field-selector', 'spec.signerName=example.com/a', '-o', 'name'),
      'certificatesigningrequest.certificates.k8s.io/csr-a',
    );
  });

  it("finds the scheduler's events by source, in either Events API", async () => {
    assert.equal(
      await ok('get', 'events', '--field-selector', 'source=default-scheduler', '-o', 'name'),
      'event/web.scheduled',
    );
    assert.equal(
      await ok('get', 'events', '--field-selector', 'source=kubelet', '-o', 'name'),
      'event/web.pulled',
    );
    assert.equal(
      await ok(
        'get',
        'events.v1.events.k8s.io',
        '--field-selector',
        'regarding.name=web,reportingController=default-scheduler',
        '-o',
        'name',
      ),
      'event.events.k8s.io/web.scheduled',
    );
  });

  it("prints Kubernetes' refusal of a label the kind does not serve", async () => {
    const cm = await k('get', 'configmaps', '--field-selector', 'data.x=1');
    assert.notEqual(cm.code, 0);
    assert.match(
      cm.stderr,
      /"data\.x" is not a known field selector: only "metadata\.name", "metadata\.namespace"/,
    );
    const ns = await k('get', 'namespaces', '--field-selector', 'metadata.namespace!=foo');
    assert.notEqual(ns.code, 0);
    assert.match(ns.stderr, /field label not supported: metadata\.namespace/);
  });
});
