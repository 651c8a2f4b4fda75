// A pod's volumes on disk, set up from a real apiserver (in-process):
// ConfigMaps, Secrets, the downward API, projected service account tokens
// from TokenRequest, emptyDir and hostPath, in the kubelet's layout.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../../shared/client';
import { validatePayloadPath, writeAtomically } from './atomic-writer';
import { PodObjects } from './pod-objects';
import { checkHostPathType, PodVolumes, VOLUME_REFRESH_MS } from './volumes';

describe('nodeagent/pods: volumes', () => {
  let srv: TestAPIServer;
  let client: Client;
  let objects: PodObjects;
  let dir: string;
  let now = Date.now();
  let volumes: PodVolumes;
  let pod: any;
  const ctx = { podIPs: ['10.244.0.9'], hostIPs: ['192.168.0.10'], allocatable: { cpu: '2', memory: '4Gi' } };
  const ns = 'vol-test';

  before(async function () {
    this.timeout(60_000);
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
    objects = new PodObjects(client);
    await client.resource('namespaces').create({ metadata: { name: ns } });
    await client
      .resource('serviceaccounts')
      .namespace(ns)
      .create({ metadata: { name: 'default' } });
    await client
      .resource('configmaps')
      .namespace(ns)
      .create({
        metadata: { name: 'cfg' },
        data: { 'app.conf': 'v=1', other: 'o' },
        binaryData: { 'bin.dat': Buffer.from([0, 1, 2]).toString('base64') },
      });
    await client
      .resource('secrets')
      .namespace(ns)
      .create({ metadata: { name: 'sec' }, data: { token: Buffer.from('abc').toString('base64') } });
    // A real pod: the projected token is bound to it.
    pod = await client
      .resource('pods')
      .namespace(ns)
      .create({
        metadata: { name: 'p', labels: { b: '2', a: '1' } },
        spec: {
          containers: [{ name: 'c', image: 'busybox', resources: { limits: { memory: '64Mi' } } }],
          volumes: [
            { name: 'cfg', configMap: { name: 'cfg' } },
            {
              name: 'cfg-items',
              configMap: {
                name: 'cfg',
                items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o600 }],
                defaultMode: 0o640,
              },
            },
            { name: 'sec', secret: { secretName: 'sec', defaultMode: 0o400 } },
            { name: 'opt', secret: { secretName: 'missing', optional: true } },
            { name: 'scratch', emptyDir: {} },
            {
              name: 'info',
              downwardAPI: {
                items: [
                  { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                  {
                    path: 'mem',
                    resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' },
                  },
                  // The zero divisor Go clients send for an unset one: as 1 (and accepted by validation).
                  {
                    path: 'cpu',
                    resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '0' },
                  },
                ],
              },
            },
            {
              name: 'api',
              projected: {
                sources: [
                  { serviceAccountToken: { path: 'token', expirationSeconds: 3600, audience: 'vault' } },
                  { configMap: { name: 'cfg', items: [{ key: 'other', path: 'other' }] } },
                  {
                    downwardAPI: {
                      items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }],
                    },
                  },
                ],
              },
            },
          ],
        },
      });
  });
  after(async () => {
    await objects?.close();
    await client?.close();
    await srv?.stop();
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-vol-'));
    now = Date.now();
    volumes = new PodVolumes({ rootDir: dir, objects, now: () => now, realRuntime: false });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const volDir = (plugin: string, name: string) =>
    join(dir, 'pods', pod.metadata.uid, 'volumes', `kubernetes.io~${plugin}`, name);

  it('sets up configMap, secret, downwardAPI, projected and emptyDir volumes in the kubelet layout', async () => {
    assert.deepEqual(await volumes.setUp(pod, ctx), []);
    const cfg = volDir('configmap', 'cfg');
    assert.equal(readFileSync(join(cfg, 'app.conf'), 'utf8'), 'v=1');
    assert.deepEqual([...readFileSync(join(cfg, 'bin.dat'))], [0, 1, 2]);
    assert.equal(statSync(join(cfg, 'app.conf')).mode & 0o777, 0o644);
    assert.ok(lstatSync(join(cfg, 'app.conf')).isSymbolicLink(), 'user-visible names link through ..data');
    assert.equal(readlinkSync(join(cfg, 'app.conf')), '..data/app.conf');
    assert.match(readlinkSync(join(cfg, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]+$/);

    const items = volDir('configmap', 'cfg-items');
    assert.equal(readFileSync(join(items, 'conf/app.conf'), 'utf8'), 'v=1');
    assert.equal(statSync(join(items, 'conf/app.conf')).mode & 0o777, 0o600);
    assert.ok(!existsSync(join(items, 'other')));

    const sec = volDir('secret', 'sec');
    assert.equal(readFileSync(join(sec, 'token'), 'utf8'), 'abc');
    assert.equal(statSync(join(sec, 'token')).mode & 0o777, 0o400);
    assert.ok(existsSync(volDir('secret', 'opt')), 'an optional missing secret is an empty volume');

    const info = volDir('downward-api', 'info');
    assert.equal(readFileSync(join(info, 'labels'), 'utf8'), 'a="1"\nb="2"');
    assert.equal(readFileSync(join(info, 'mem'), 'utf8'), '64');
    assert.equal(readFileSync(join(info, 'cpu'), 'utf8'), '2', 'no cpu limit: the allocatable, in cores');

    const api = volDir('projected', 'api');
    assert.equal(readFileSync(join(api, 'namespace'), 'utf8'), ns);
    assert.equal(readFileSync(join(api, 'other'), 'utf8'), 'o');
    const token = readFileSync(join(api, 'token'), 'utf8');
    // The token authenticates as the pod's service account, for the audience asked.
    const review = await client.resource('tokenreviews').create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: ['vault'] },
    } as any);
    assert.equal((review as any).status.authenticated, true);
    assert.equal((review as any).status.user.username, `system:serviceaccount:${ns}:default`);

    const scratch = volDir('empty-dir', 'scratch');
    assert.equal(statSync(scratch).mode & 0o777, 0o777);

    // Mounts: volumeMounts with subPath and readOnly, then the termination message file.
    const mounts = volumes.mountsFor(
      pod,
      {
        name: 'c',
        volumeMounts: [
          { name: 'cfg', mountPath: '/etc/app' },
          { name: 'scratch', mountPath: '/data', subPathExpr: '$(POD)/x' },
          { name: 'scratch', mountPath: '/ro', readOnly: true },
        ],
        terminationMessagePath: '/tmp/term',
      },
      [{ name: 'POD', value: 'p' }],
      0,
    );
    assert.deepEqual(mounts.slice(0, 3), [
      { containerPath: '/etc/app', hostPath: cfg, readOnly: true },
      { containerPath: '/data', hostPath: join(scratch, 'p/x'), readOnly: false },
      { containerPath: '/ro', hostPath: scratch, readOnly: true },
    ]);
    assert.ok(statSync(join(scratch, 'p/x')).isDirectory(), 'a missing subPath is created');
    assert.equal(mounts[3].containerPath, '/tmp/term');
    assert.ok(mounts[3].hostPath.startsWith(join(dir, 'pods', pod.metadata.uid, 'containers', 'c')));
    writeFileSync(mounts[3].hostPath, 'bye');
    assert.equal(volumes.terminationMessage(pod.metadata.uid, 'c', 0), 'bye');
    assert.throws(
      () =>
        volumes.mountsFor(
          pod,
          { name: 'c', volumeMounts: [{ name: 'cfg', mountPath: '/x', subPath: '../../etc' }] },
          [],
          0,
        ),
      /unable to provision SubPath `\.\.\/\.\.\/etc`: must not contain '\.\.'/,
    );

    await volumes.tearDown(pod.metadata.uid);
    assert.ok(!existsSync(join(dir, 'pods', pod.metadata.uid)));
  });

  it('rewrites a changed ConfigMap atomically on a later sync and keeps a fresh token', async () => {
    assert.deepEqual(await volumes.setUp(pod, ctx), []);
    const cfg = volDir('configmap', 'cfg');
    const firstData = readlinkSync(join(cfg, '..data'));
    const token = readFileSync(join(volDir('projected', 'api'), 'token'), 'utf8');
    const cm = await client.resource('configmaps').namespace(ns).get('cfg');
    await client
      .resource('configmaps')
      .namespace(ns)
      .update({ ...cm, data: { 'app.conf': 'v=2', other: 'o' }, binaryData: {} });
    // Within the refresh interval the volume is left alone.
    await volumes.setUp(pod, ctx);
    assert.equal(readFileSync(join(cfg, 'app.conf'), 'utf8'), 'v=1');
    now += VOLUME_REFRESH_MS;
    assert.deepEqual(await volumes.setUp(pod, ctx), []);
    assert.equal(readFileSync(join(cfg, 'app.conf'), 'utf8'), 'v=2');
    assert.ok(!existsSync(join(cfg, 'bin.dat')), 'a removed key disappears');
    assert.ok(!existsSync(join(cfg, firstData)), 'the old data directory is removed');
    assert.equal(readFileSync(join(volDir('projected', 'api'), 'token'), 'utf8'), token, 'token reused');
    // A source gone later: the volume keeps its files, the failure is only a refresh.
    const broken = {
      ...pod,
      spec: { ...pod.spec, volumes: [{ name: 'cfg', configMap: { name: 'gone-later' } }] },
    };
    now += VOLUME_REFRESH_MS;
    assert.deepEqual(await volumes.setUp(broken, ctx), [
      { volume: 'cfg', message: 'configmap "gone-later" not found', refresh: true },
    ]);
    assert.equal(readFileSync(join(cfg, 'app.conf'), 'utf8'), 'v=2');
    // Past 80 % of its life the token is requested again.
    now += 3600 * 1000 * 0.81;
    assert.deepEqual(await volumes.setUp(pod, ctx), []);
    assert.notEqual(readFileSync(join(volDir('projected', 'api'), 'token'), 'utf8'), token);
    await client
      .resource('configmaps')
      .namespace(ns)
      .update({
        ...(await client.resource('configmaps').namespace(ns).get('cfg')),
        data: cm.data,
        binaryData: cm.binaryData,
      });
  });

  it('mounts a tmpfs for a memory-backed emptyDir (as root, real runtime) and unmounts it on teardown', async function () {
    if (process.getuid?.() !== 0) this.skip();
    const real = new PodVolumes({ rootDir: dir, objects, now: () => now, realRuntime: true });
    const memPod = {
      metadata: { name: 'm', namespace: ns, uid: 'mem-uid' },
      spec: {
        volumes: [
          { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
          { name: 'sec', secret: { secretName: 'sec' } },
        ],
      },
    };
    assert.deepEqual(await real.setUp(memPod, ctx), []);
    const path = join(dir, 'pods', 'mem-uid', 'volumes', 'kubernetes.io~empty-dir', 'shm');
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === path);
    assert.ok(line, 'mounted');
    assert.match(line!, / - tmpfs tmpfs rw,.*size=1024k/);
    const secPath = join(dir, 'pods', 'mem-uid', 'volumes', 'kubernetes.io~secret', 'sec');
    assert.ok(
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .some((l) => l.split(' ')[4] === secPath && / - tmpfs /.test(l)),
      'a secret volume is memory-backed',
    );
    assert.equal(readFileSync(join(secPath, 'token'), 'utf8'), 'abc');
    // Set up again (a later sync): not mounted twice.
    assert.deepEqual(await real.setUp(memPod, ctx), []);
    await real.tearDown('mem-uid');
    assert.ok(!readFileSync('/proc/self/mountinfo', 'utf8').includes(path), 'unmounted');
    assert.ok(!existsSync(join(dir, 'pods', 'mem-uid')));
  });

  it("gives the volumes the pod's fsGroup (kubelet's volume ownership)", async function () {
    if (process.getuid?.() !== 0) this.skip();
    const grouped = {
      metadata: { name: 'g', namespace: ns, uid: 'fsgroup-uid' },
      spec: {
        securityContext: { fsGroup: 2345 },
        volumes: [
          { name: 'sec', secret: { secretName: 'sec', defaultMode: 0o400 } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
    };
    assert.deepEqual(await volumes.setUp(grouped, ctx), []);
    const base = join(dir, 'pods', 'fsgroup-uid', 'volumes');
    const token = statSync(join(base, 'kubernetes.io~secret', 'sec', 'token'));
    assert.equal(token.gid, 2345);
    assert.equal(token.mode & 0o777, 0o440, 'group-readable, read-only volume');
    const tmp = statSync(join(base, 'kubernetes.io~empty-dir', 'tmp'));
    assert.equal(tmp.gid, 2345);
    assert.equal(tmp.mode & 0o2000, 0o2000, 'setgid directory');
  });

  it('reports each failing volume with the kubelet error text', async () => {
    const bad = {
      ...pod,
      spec: {
        ...pod.spec,
        volumes: [
          { name: 'a', configMap: { name: 'nope' } },
          { name: 'b', secret: { secretName: 'sec', items: [{ key: 'x', path: 'x' }] } },
          { name: 'c', configMap: { name: 'cfg', items: [{ key: 'x', path: 'x' }] } },
          { name: 'd', hostPath: { path: join(dir, 'absent'), type: 'Directory' } },
          { name: 'e', emptyDir: {} },
        ],
      },
    };
    assert.deepEqual(await volumes.setUp(bad, ctx), [
      { volume: 'a', message: 'configmap "nope" not found' },
      { volume: 'b', message: 'references non-existent secret key: x' },
      { volume: 'c', message: 'configmap references non-existent config key: x' },
      { volume: 'd', message: `hostPath type check failed: ${join(dir, 'absent')} is not a directory` },
    ]);
  });

  it('checks hostPath types, creating what *OrCreate asks for', async () => {
    const d = join(dir, 'made/dir');
    checkHostPathType(d, 'DirectoryOrCreate');
    assert.ok(statSync(d).isDirectory());
    const f = join(dir, 'file');
    checkHostPathType(f, 'FileOrCreate');
    assert.ok(statSync(f).isFile());
    checkHostPathType(f, 'File');
    checkHostPathType(f, undefined);
    assert.throws(() => checkHostPathType(f, 'Directory'), new RegExp(`${f} is not a directory`));
    assert.throws(() => checkHostPathType(d, 'File'), new RegExp(`${d} is not a file`));
    assert.throws(() => checkHostPathType(f, 'Socket'), /is not a socket file/);
    assert.throws(() => checkHostPathType(f, 'CharDevice'), /is not a character device/);
    checkHostPathType('/dev/null', 'CharDevice');
    const sock = join(dir, 's.sock');
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      checkHostPathType(sock, 'Socket');
    } finally {
      server.close();
    }
    assert.throws(() => checkHostPathType(f, 'Bogus'), /^Error: Bogus is an invalid volume type$/);
    mkdirSync(join(dir, 'x'));
  });

  // Claims bound by hand, as the binder would (status too).
  const pvcs = () => client.resource('persistentvolumeclaims').namespace(ns);
  const pvs = () => client.resource('persistentvolumes');
  const claim = (name: string) =>
    pvcs().create({
      metadata: { name },
      spec: {
        storageClassName: '',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    });
  const bind = async (pvc: any, pv: any) => {
    await pvs().patch(
      pv.metadata.name,
      { spec: { claimRef: { namespace: ns, name: pvc.metadata.name, uid: pvc.metadata.uid } } },
      'merge',
    );
    await pvcs().patch(pvc.metadata.name, { spec: { volumeName: pv.metadata.name } }, 'merge');
    await pvcs().patch(pvc.metadata.name, { status: { phase: 'Bound' } }, 'merge', { subresource: 'status' });
  };
  const affinity = {
    required: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n'] }] },
      ],
    },
  };
  const pvSpec = { storageClassName: '', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } };

  it("mounts a claim's bound PV (hostPath, local), and waits with the kubelet's texts while it is not", async () => {
    const hostDir = join(dir, 'pv-host');
    const localDir = join(dir, 'pv-local');
    const hp = await pvs().create({
      metadata: { name: 'vol-hp' },
      spec: { ...pvSpec, hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
    });
    const loc = await pvs().create({
      metadata: { name: 'vol-local' },
      spec: { ...pvSpec, local: { path: localDir }, nodeAffinity: affinity },
    });
    const nfs = await pvs().create({
      metadata: { name: 'vol-nfs' },
      spec: { ...pvSpec, nfs: { server: '127.0.0.1', path: '/x' } },
    });
    const [c1, c2, c3] = [await claim('c1'), await claim('c2'), await claim('c3')];
    const user = {
      metadata: { name: 'user', namespace: ns, uid: 'claim-user-uid' },
      spec: {
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'c1' } },
          { name: 'fast', persistentVolumeClaim: { claimName: 'c2', readOnly: true } },
          { name: 'remote', persistentVolumeClaim: { claimName: 'c3' } },
        ],
      },
    };
    assert.deepEqual(await volumes.setUp(user, ctx), [
      { volume: 'data', message: `error processing PVC ${ns}/c1: PVC is not bound`, processing: true },
      { volume: 'fast', message: `error processing PVC ${ns}/c2: PVC is not bound`, processing: true },
      { volume: 'remote', message: `error processing PVC ${ns}/c3: PVC is not bound`, processing: true },
    ]);
    await bind(c1, hp);
    await bind(c2, loc);
    await bind(c3, nfs);
    const failures = await volumes.setUp(user, ctx);
    assert.deepEqual(failures, [
      { volume: 'fast', message: `path "${localDir}" does not exist` },
      {
        volume: 'remote',
        message:
          'PersistentVolume vol-nfs: volume type not supported by this node (it mounts hostPath and local volumes only)',
      },
    ]);
    assert.ok(statSync(hostDir).isDirectory(), 'DirectoryOrCreate made the directory');
    mkdirSync(localDir);
    const onlyMounted = { ...user, spec: { volumes: user.spec.volumes.slice(0, 2) } };
    assert.deepEqual(await volumes.setUp(onlyMounted, ctx), []);
    const mounts = volumes.mountsFor(
      onlyMounted,
      {
        name: 'c',
        volumeMounts: [
          { name: 'data', mountPath: '/data', subPath: 'sub' },
          { name: 'fast', mountPath: '/fast' },
        ],
      },
      [],
      0,
    );
    assert.deepEqual(mounts.slice(0, 2), [
      { containerPath: '/data', hostPath: join(hostDir, 'sub'), readOnly: false },
      { containerPath: '/fast', hostPath: localDir, readOnly: true },
    ]);
    assert.ok(statSync(join(hostDir, 'sub')).isDirectory(), 'the subPath is made in the volume');
    // The local volume (device-mountable in the kubelet) is in use until the pod's volumes go.
    assert.deepEqual(volumes.inUse(), ['kubernetes.io/local-volume/vol-local']);
    await volumes.tearDown(user.metadata.uid);
    assert.deepEqual(volumes.inUse(), []);
  });

  it("mounts an ephemeral volume's claim only when the pod controls it", async () => {
    const hp = await pvs().create({
      metadata: { name: 'eph-hp' },
      spec: { ...pvSpec, hostPath: { path: join(dir, 'eph') } },
    });
    const pvc = await claim('eph-scratch');
    await bind(pvc, hp);
    const template = {
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    const user = {
      metadata: { name: 'eph', namespace: ns, uid: 'eph-pod-uid' },
      spec: { volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: template } }] },
    };
    assert.deepEqual(await volumes.setUp(user, ctx), [
      {
        volume: 'scratch',
        message: `PVC ${ns}/eph-scratch was not created for pod ${ns}/eph (pod is not owner)`,
        processing: true,
      },
    ]);
    const owner = { apiVersion: 'v1', kind: 'Pod', name: 'eph', uid: 'eph-pod-uid', controller: true };
    await pvcs().patch('eph-scratch', { metadata: { ownerReferences: [owner] } }, 'merge');
    assert.deepEqual(await volumes.setUp(user, ctx), []);
    assert.equal(volumes.path('eph-pod-uid', 'scratch'), join(dir, 'eph'));
  });

  it("gives a local claim volume the pod's fsGroup, a hostPath one not (the kubelet's plugins)", async function () {
    if (process.getuid?.() !== 0) this.skip();
    const hostDir = join(dir, 'fs-host');
    const localDir = join(dir, 'fs-local');
    mkdirSync(hostDir);
    mkdirSync(localDir);
    const hp = await pvs().create({
      metadata: { name: 'fs-hp' },
      spec: { ...pvSpec, hostPath: { path: hostDir } },
    });
    const loc = await pvs().create({
      metadata: { name: 'fs-local' },
      spec: { ...pvSpec, local: { path: localDir }, nodeAffinity: affinity },
    });
    const [c1, c2] = [await claim('fs1'), await claim('fs2')];
    await bind(c1, hp);
    await bind(c2, loc);
    const grouped = {
      metadata: { name: 'fsg', namespace: ns, uid: 'claim-fsgroup-uid' },
      spec: {
        securityContext: { fsGroup: 3456 },
        volumes: [
          { name: 'h', persistentVolumeClaim: { claimName: 'fs1' } },
          { name: 'l', persistentVolumeClaim: { claimName: 'fs2' } },
        ],
      },
    };
    assert.deepEqual(await volumes.setUp(grouped, ctx), []);
    assert.equal(statSync(localDir).gid, 3456);
    assert.equal(statSync(localDir).mode & 0o2000, 0o2000, 'setgid directory');
    assert.notEqual(statSync(hostDir).gid, 3456);
  });

  it('validates payload paths and skips rewriting an unchanged payload', () => {
    assert.throws(() => validatePayloadPath('/abs'), /must be relative path/);
    assert.throws(() => validatePayloadPath('a/../b'), /must not contain '\.\.'/);
    assert.throws(() => validatePayloadPath('..x'), /must not start with '\.\.'/);
    const target = join(dir, 'aw');
    const payload = new Map([['a', { data: Buffer.from('1'), mode: 0o644 }]]);
    assert.equal(writeAtomically(target, payload), true);
    assert.equal(writeAtomically(target, payload), false);
    assert.equal(writeAtomically(target, new Map([['a', { data: Buffer.from('1'), mode: 0o600 }]])), true);
  });
});
