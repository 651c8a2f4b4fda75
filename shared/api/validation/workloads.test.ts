// Pod, apps/v1 and batch/v1 rules with Kubernetes' exact paths, types and messages.
import assert from 'node:assert/strict';
import { applyDefaults } from '../defaults';
import { fieldErrorMessage } from '../field-errors';
import { validateObject, validateObjectUpdate } from './index';
import { cronError, generateJobSelector } from './batch';

type O = Record<string, unknown>;
const check = (o: O) => validateObject(applyDefaults(structuredClone(o))).map(fieldErrorMessage);
const checkUpdate = (o: O, old: O) =>
  validateObjectUpdate(applyDefaults(structuredClone(o)), applyDefaults(structuredClone(old))).map(
    fieldErrorMessage,
  );
const meta = (name = 'x', namespace: string | null = 'default') =>
  namespace ? { name, namespace } : { name };
const pod = (spec: O) => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta(), spec });
const ctr = (extra: O = {}) => ({ name: 'c', image: 'nginx', ...extra });
const tpl = (labels: O, spec: O = { containers: [ctr()] }) => ({ metadata: { labels }, spec });

describe('Pod', () => {
  it('containers required; names unique DNS labels; image required', () => {
    assert.deepEqual(check(pod({})), ['spec.containers: Required value']);
    assert.deepEqual(check(pod({ containers: [ctr({ name: 'Web' }), ctr({ name: 'Web', image: '' })] })), [
      `spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      `spec.containers[1].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      'spec.containers[1].name: Duplicate value: "Web"',
      'spec.containers[1].image: Required value',
    ]);
  });

  it('ports: numbers, names, protocols', () => {
    assert.deepEqual(
      check(
        pod({
          containers: [
            ctr({
              ports: [
                { containerPort: 70000, name: 'http' },
                { containerPort: 80, name: 'http', protocol: 'ICMP' },
              ],
            }),
          ],
        }),
      ),
      [
        'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
        'spec.containers[0].ports[1].name: Duplicate value: "http"',
        'spec.containers[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      ],
    );
  });

  it('restartPolicy and dnsPolicy enums, in Kubernetes order', () => {
    assert.deepEqual(check(pod({ containers: [ctr()], restartPolicy: 'Sometimes', dnsPolicy: 'Google' })), [
      'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"',
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it('resources: requests ≤ limits, names, integers for extended resources', () => {
    assert.deepEqual(
      check(
        pod({
          containers: [
            ctr({
              resources: {
                requests: { cpu: '2', 'example.com/gpu': '1' },
                limits: { cpu: '1', 'example.com/gpu': '2' },
              },
            }),
          ],
        }),
      ),
      [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
      ],
    );
    assert.deepEqual(check(pod({ containers: [ctr({ resources: { limits: { gpu: '1' } } })] })), [
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers',
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ]);
  });

  it('volumes and mounts', () => {
    assert.deepEqual(
      check(
        pod({
          containers: [ctr({ volumeMounts: [{ name: 'nope', mountPath: '/a' }] })],
          volumes: [{ name: 'v', secret: {}, configMap: { name: 'c' } }],
        }),
      ),
      [
        'spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type',
        'spec.volumes[0].secret.secretName: Required value',
        'spec.containers[0].volumeMounts[0].name: Not found: "nope"',
      ],
    );
  });

  it('update: only images and a few fields may change', () => {
    // A PUT carries the stored pull policy; a changed default would count as a change.
    const old = pod({ containers: [ctr({ imagePullPolicy: 'Always' })] });
    assert.deepEqual(
      checkUpdate(
        {
          ...pod({ containers: [ctr({ image: 'nginx:2', imagePullPolicy: 'Always' })] }),
          metadata: { ...meta(), resourceVersion: '2' },
        },
        old,
      ),
      [],
    );
    assert.deepEqual(
      checkUpdate(
        { ...pod({ containers: [ctr()], hostname: 'h' }), metadata: { ...meta(), resourceVersion: '2' } },
        old,
      ),
      [
        'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      ],
    );
  });
});

describe('apps/v1 workloads', () => {
  const deploy = (spec: O) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(), spec });
  it('selector required, non-empty, matching the template', () => {
    assert.deepEqual(check(deploy({ template: tpl({ app: 'a' }) })), ['spec.selector: Required value']);
    assert.deepEqual(check(deploy({ selector: {}, template: tpl({ app: 'a' }) })), [
      'spec.selector: Invalid value: {}: empty selector is invalid for deployment',
    ]);
    assert.deepEqual(
      check(deploy({ selector: { matchLabels: { app: 'b' } }, template: tpl({ app: 'a' }) })),
      [
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`',
      ],
    );
  });

  it('replicas ≥ 0, restartPolicy Always, strategy rules', () => {
    assert.deepEqual(
      check(
        deploy({
          replicas: -1,
          selector: { matchLabels: { app: 'a' } },
          template: tpl({ app: 'a' }, { containers: [ctr()], restartPolicy: 'Never' }),
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '150%' } },
        }),
      ),
      [
        'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
      ],
    );
    assert.deepEqual(
      check(
        deploy({
          selector: { matchLabels: { app: 'a' } },
          template: tpl({ app: 'a' }),
          strategy: { type: 'Recreate', rollingUpdate: {} },
        }),
      ),
      ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    );
    assert.deepEqual(
      check(
        deploy({
          selector: { matchLabels: { app: 'a' } },
          template: tpl({ app: 'a' }),
          strategy: { type: 'Blue' },
        }),
      ),
      ['spec.strategy: Unsupported value: {"type":"Blue"}: supported values: "Recreate", "RollingUpdate"'],
    );
  });

  it('selector is immutable on update', () => {
    const old = deploy({ selector: { matchLabels: { app: 'a' } }, template: tpl({ app: 'a', v: '1' }) });
    const now = {
      ...deploy({ selector: { matchLabels: { app: 'a', v: '1' } }, template: tpl({ app: 'a', v: '1' }) }),
      metadata: { ...meta(), resourceVersion: '3' },
    };
    assert.deepEqual(checkUpdate(now, old), [
      'spec.selector: Invalid value: {"matchLabels":{"app":"a","v":"1"}}: field is immutable',
    ]);
  });

  it('StatefulSet mounts may name a volume claim template (ValidatePodTemplateSpecForStatefulSet)', () => {
    const mount = (name: string) => ctr({ volumeMounts: [{ name, mountPath: `/${name}` }] });
    const sts = (mountName: string) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta(),
      spec: {
        serviceName: 'web',
        selector: { matchLabels: { a: 'b' } },
        template: tpl({ a: 'b' }, { containers: [mount(mountName)] }),
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    });
    assert.deepEqual(check(sts('data')), []);
    // Neither a template volume nor a claim template: still refused, as for any pod.
    assert.deepEqual(check(sts('logs')), [
      'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "logs"',
    ]);
    // A Deployment has no claim templates to lend a name.
    assert.deepEqual(
      check({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(),
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: tpl({ a: 'b' }, { containers: [mount('data')] }),
        },
      }),
      ['spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    );
  });

  it('ReplicaSet, DaemonSet, StatefulSet', () => {
    assert.deepEqual(
      check({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: meta(),
        spec: { selector: {}, template: tpl({}) },
      }),
      ['spec.selector: Invalid value: {}: empty selector is invalid for deployment'],
    );
    assert.deepEqual(
      check({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: meta(),
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: tpl({ a: 'b' }),
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } },
        },
      }),
      [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero',
      ],
    );
    assert.deepEqual(
      check({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: meta(),
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: tpl({ a: 'b' }),
          podManagementPolicy: 'Random',
        },
      }),
      ["spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"],
    );
    const sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta(),
      spec: { serviceName: 'a', selector: { matchLabels: { a: 'b' } }, template: tpl({ a: 'b' }) },
    };
    assert.deepEqual(
      checkUpdate(
        { ...sts, metadata: { ...meta(), resourceVersion: '2' }, spec: { ...sts.spec, serviceName: 'b' } },
        sts,
      ),
      [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ],
    );
  });
});

describe('batch/v1', () => {
  it('Job: restartPolicy OnFailure/Never, selector generated by the strategy', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta('pi'),
      spec: { template: { spec: { containers: [ctr()] } } },
    };
    assert.deepEqual(check(job), [
      'spec.selector: Required value',
      'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ]);
    const generated = structuredClone(job) as O;
    generateJobSelector(generated, 'uid-1');
    (generated.spec as { template: { spec: O } }).template.spec.restartPolicy = 'Never';
    assert.deepEqual(check(generated), []);
  });

  it('CronJob: schedule syntax (robfig/cron messages), TZ, name length', () => {
    const cj = (name: string, schedule: string) => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: meta(name),
      spec: {
        schedule,
        jobTemplate: { spec: { template: { spec: { containers: [ctr()], restartPolicy: 'OnFailure' } } } },
      },
    });
    assert.deepEqual(check(cj('a'.repeat(53), '* * * * *')), [
      `metadata.name: Invalid value: "${'a'.repeat(53)}": must be no more than 52 characters`,
    ]);
    assert.deepEqual(check(cj('a', 'every minute')), [
      'spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]',
    ]);
    assert.deepEqual(check(cj('a', 'CRON_TZ=UTC 0 * * * *')), [
      'spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ]);
    assert.equal(cronError('60 * * * *'), 'end of range (60) above maximum (59): 60');
    assert.equal(
      cronError('* * * * mon-x'),
      'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax',
    );
    assert.equal(cronError('@hourly'), undefined);
    assert.equal(cronError('@every 5m'), undefined);
    assert.equal(cronError('@sometimes'), 'unrecognized descriptor: @sometimes');
  });
});
