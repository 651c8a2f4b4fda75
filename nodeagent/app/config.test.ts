import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { addFlags, flagWasSet, readFlags } from '../../shared/options/flags';
import { nodeagentFlags } from './options';
import { mergeKubeletConfiguration, parseHeaders, parseTaint, resolveConfig } from './config';
import { toKubeletConfiguration } from './configz';
import { loadKubeletConfigFile } from './kubelet-config-file';

/** Parses argv like cmd/nodeagent.ts does, with an optional config file. */
function load(argv: string[], file?: string) {
  const cmd = addFlags(new Command('nodeagent').exitOverride(), nodeagentFlags);
  cmd.parse(['node', 'nodeagent', ...argv]);
  const { values } = readFlags(cmd, nodeagentFlags);
  const set = (attr: string) =>
    flagWasSet(
      cmd,
      attr.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`),
    );
  let v = values;
  let warnings: string[] = [];
  if (file) {
    const m = mergeKubeletConfiguration(values, loadKubeletConfigFile(file), set);
    v = m.values;
    warnings = m.warnings;
  }
  return { values: v, warnings, set };
}

describe('nodeagent/app: options and KubeletConfiguration', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-nodeagent-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('has the SPEC defaults (kubelet 1.27+ API QPS)', () => {
    const { values, set } = load(['--root-dir', dir]);
    const c = resolveConfig(values, { explicit: set, hostname: 'My-Host' });
    assert.equal(c.nodeName, 'my-host');
    assert.equal(c.port, 10250);
    assert.equal(c.readOnlyPort, 10255);
    assert.equal(c.healthzPort, 10248);
    assert.equal(c.healthzBindAddress, '127.0.0.1');
    assert.equal(c.address, '0.0.0.0');
    assert.equal(c.anonymousAuth, true);
    assert.equal(c.authorizationMode, 'AlwaysAllow');
    assert.equal(c.maxPods, 110);
    assert.equal(c.fileCheckFrequencyMs, 20_000);
    assert.equal(c.httpCheckFrequencyMs, 20_000);
    assert.equal(c.nodeStatusUpdateFrequencyMs, 10_000);
    assert.equal(c.nodeStatusReportFrequencyMs, 300_000);
    assert.equal(c.nodeStatusMaxImages, 50);
    assert.equal(c.kubeAPIQPS, 50);
    assert.equal(c.kubeAPIBurst, 100);
    assert.equal(c.eventQPS, 5);
    assert.equal(c.eventBurst, 10);
    assert.equal(c.containerLogMaxSizeBytes, 10 * 1024 * 1024);
    assert.equal(c.containerLogMaxFiles, 5);
    assert.equal(c.evictionHard.length, 3);
    assert.equal(c.evictionPressureTransitionPeriodMs, 300_000);
    assert.equal(c.imageGCHighThresholdPercent, 85);
    assert.equal(c.imageGCLowThresholdPercent, 80);
    assert.equal(c.imageMinimumGCAgeMs, 120_000);
    assert.equal(c.cpuManagerPolicy, 'none');
    assert.equal(c.cgroupDriver, 'cgroupfs');
    assert.equal(c.oomScoreAdj, -999);
    assert.equal(c.podPidsLimit, -1);
    assert.equal(c.maxOpenFiles, 1_000_000);
    assert.equal(c.registerNode, true);
    assert.equal(c.registerSchedulable, true);
    assert.equal(c.cgroupsPerQOS, true);
    assert.equal(c.cpuCFSQuota, true);
    assert.equal(c.failSwapOn, true);
    assert.equal(c.runtime, 'fake');
    assert.equal(c.nodeLeaseDurationSeconds, 40);
    // --root-dir given, --cert-dir not: the certificates go under the root dir.
    assert.equal(c.certDir, join(dir, 'pki'));
  });

  it('accepts the neutral spellings as aliases', () => {
    const { values } = load(['--cluster-api-qps', '7']);
    assert.equal(values.kubeApiQps, 7);
  });

  it('merges a KubeletConfiguration file, the command line winning', () => {
    const p = file(
      'kubelet.yaml',
      `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 11250
readOnlyPort: 0
healthzPort: 11248
maxPods: 20
staticPodPath: /etc/kubernetes/manifests
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 4s
nodeStatusReportFrequency: 1m
nodeLeaseDurationSeconds: 20
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true, cacheTTL: 30s}
  x509: {clientCAFile: /etc/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 1m, cacheUnauthorizedTTL: 5s}
evictionHard:
  memory.available: 200Mi
  pid.available: 10%
registerWithTaints:
- {key: dedicated, value: gpu, effect: NoSchedule}
- {key: spot, effect: PreferNoSchedule}
staticPodURLHeader:
  X-Token: [a, b]
featureGates:
  AllAlpha: false
  CPUManager: false
containerLogMaxSize: 1Mi
kubeAPIQPS: 40
eventRecordQPS: 9
clusterDomain: cluster.local
clusterDNS: [10.96.0.10, 10.96.0.11]
resolvConf: /run/systemd/resolve/resolv.conf
someUnknownField: 1
`,
    );
    const { values, warnings, set } = load(
      ['--root-dir', dir, '--max-pods', '30', '--feature-gates', 'CPUManager=true'],
      p,
    );
    const c = resolveConfig(values, { explicit: set, hostname: 'n1' });
    assert.equal(c.address, '127.0.0.1');
    assert.equal(c.port, 11250);
    assert.equal(c.readOnlyPort, 0);
    assert.equal(c.healthzPort, 11248);
    assert.equal(c.maxPods, 30, 'the flag wins over the file');
    assert.equal(c.podManifestPath, '/etc/kubernetes/manifests');
    assert.equal(c.fileCheckFrequencyMs, 5000);
    assert.equal(c.nodeStatusUpdateFrequencyMs, 4000);
    assert.equal(c.nodeStatusReportFrequencyMs, 60_000);
    assert.equal(c.nodeLeaseDurationSeconds, 20);
    assert.equal(c.anonymousAuth, false);
    assert.equal(c.webhookAuthentication, true);
    assert.equal(c.webhookAuthenticationCacheTTLMs, 30_000);
    assert.equal(c.clientCAFile, '/etc/ca.crt');
    assert.equal(c.authorizationMode, 'Webhook');
    assert.equal(c.authorizedCacheTTLMs, 60_000);
    assert.equal(c.unauthorizedCacheTTLMs, 5000);
    assert.deepEqual(
      c.evictionHard.map((t) => `${t.signal}<${t.text}`),
      ['memory.available<200Mi', 'pid.available<10%'],
    );
    assert.deepEqual(c.registerWithTaints, [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'spot', effect: 'PreferNoSchedule' },
    ]);
    assert.deepEqual(c.manifestURLHeader, { 'X-Token': ['a', 'b'] });
    assert.deepEqual(
      c.featureGates,
      { AllAlpha: 'false', CPUManager: 'true' },
      'gates merge, the flag wins per gate',
    );
    assert.equal(c.containerLogMaxSizeBytes, 1024 * 1024);
    assert.equal(c.kubeAPIQPS, 40);
    assert.equal(c.eventQPS, 9);
    assert.equal(c.clusterDomain, 'cluster.local');
    assert.deepEqual(c.clusterDNS, ['10.96.0.10', '10.96.0.11']);
    assert.equal(c.resolvConf, '/run/systemd/resolve/resolv.conf');
    assert.deepEqual(warnings, [
      'strict decoding error: unknown field "someUnknownField" in the kubelet config file',
    ]);
    // The effective configuration reads back with the same field names.
    const kc: any = toKubeletConfiguration(c);
    assert.equal(kc.kind, 'KubeletConfiguration');
    assert.equal(kc.maxPods, 30);
    assert.equal(kc.fileCheckFrequency, '5s');
    assert.equal(kc.authentication.anonymous.enabled, false);
    assert.deepEqual(kc.evictionHard, { 'memory.available': '200Mi', 'pid.available': '10%' });
  });

  it('rejects files that are not a KubeletConfiguration and bad field types', () => {
    const p = file('bad.yaml', 'apiVersion: v1\nkind: ConfigMap\n');
    assert.throws(
      () => loadKubeletConfigFile(p),
      /failed to load Kubelet config file .*no kind "ConfigMap" is registered for version "v1"/,
    );
    const q = file(
      'bad2.yaml',
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfileCheckFrequency: 20\n',
    );
    assert.throws(() => load([], q), /fileCheckFrequency: expected a duration string/);
  });

  it('parses taints and manifest URL headers like the kubelet', () => {
    assert.deepEqual(parseTaint('a=b:NoExecute'), { key: 'a', value: 'b', effect: 'NoExecute' });
    assert.deepEqual(parseTaint('example.com/x:NoSchedule'), { key: 'example.com/x', effect: 'NoSchedule' });
    assert.throws(() => parseTaint('a=b:Sometimes'), /invalid taint effect: Sometimes/);
    assert.throws(() => parseTaint('nope'), /invalid taint spec: nope/);
    assert.deepEqual(parseHeaders(['a:hello,b:again,c:world', 'b:beautiful']), {
      a: ['hello'],
      b: ['again', 'beautiful'],
      c: ['world'],
    });
  });

  it('validates values', () => {
    assert.throws(() => load(['--runtime', 'docker']), /unsupported runtime "docker"/);
    assert.throws(() => load(['--authorization-mode', 'RBAC']), /unknown authorization mode "RBAC"/);
    const { values, set } = load([
      '--root-dir',
      dir,
      '--image-gc-low-threshold',
      '90',
      '--image-gc-high-threshold',
      '80',
    ]);
    assert.throws(
      () => resolveConfig(values, { explicit: set, hostname: 'x' }),
      /must be less than or equal to --image-gc-high-threshold/,
    );
  });
});
