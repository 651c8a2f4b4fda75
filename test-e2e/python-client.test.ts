// The official Python client (Debian's python3-kubernetes under /usr/bin/python3)
// against a real apiserver process: create_from_yaml conflicts carry the Status
// exactly as Kubernetes writes it, watch=True is a watch, and Nodes written by
// the node agent deserialize (nodeInfo.kubeProxyVersion present, even empty).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAPIServerProcess, type APIServerProc } from './support/processes';
import { kubectl } from './support/kubectl';
import { nodeInfo, type StatusFacts } from '../nodeagent/status/node';

const PYTHON = '/usr/bin/python3';

function pythonHasKubernetes(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function runPython(script: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, ['-c', script, ...args], { timeout: 60_000 }, (e, out, err) =>
      resolve({ code: e ? 1 : 0, out: String(out), err: String(err) }),
    );
  });
}

const SCRIPT = String.raw`
import json, sys, threading
from kubernetes import client, config, utils, watch
config.load_kube_config(sys.argv[1])
api = client.ApiClient()
core = client.CoreV1Api(api)
out = {}

# create_from_yaml twice: the second fails with the Go-shaped 409 Status.
utils.create_from_yaml(api, sys.argv[2])
try:
    utils.create_from_yaml(api, sys.argv[2])
    out['conflict'] = None
except utils.FailToCreateError as e:
    out['conflict'] = [(x.status, x.body if isinstance(x.body, str) else x.body.decode()) for x in e.api_exceptions]

# watch=True: the ADDED events of what exists, then the events of a new object.
def later():
    core.create_namespaced_config_map('default', {'metadata': {'name': 'watched'}})
threading.Timer(1.0, later).start()
events = []
for ev in watch.Watch().stream(core.list_namespaced_config_map, 'default', timeout_seconds=4):
    events.append([ev['type'], ev['object'].metadata.name])
out['events'] = events

node = core.read_node(sys.argv[3])
out['kubeProxyVersion'] = node.status.node_info.kube_proxy_version
out['nodes'] = [n.metadata.name for n in core.list_node().items]
print(json.dumps(out))
`;

describe('the Python client', function () {
  this.timeout(120_000);
  let srv: APIServerProc;

  before(async function () {
    if (!pythonHasKubernetes()) {
      console.warn(`${PYTHON} has no kubernetes module (apt-get install python3-kubernetes): skipping`);
      this.skip();
    }
    srv = await startAPIServerProcess();
  });
  after(async () => {
    await srv?.cleanup();
  });

  it('sees conflicts, watches and Nodes as against Kubernetes', async () => {
    const manifest = join(srv.dir, 'deploy.yaml');
    writeFileSync(
      manifest,
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: py, namespace: default}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: pycm, namespace: default}
`,
    );
    // A Node with the status the node agent writes.
    const facts = {
      machine: {
        machineID: 'm',
        systemUUID: 's',
        bootID: 'b',
        kernelVersion: '6.1',
        osImage: 'Debian',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      runtimeVersion: 'fake://0.1.0',
    } as unknown as StatusFacts;
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pynode' } };
    let r = await kubectl(srv.kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(node) });
    assert.equal(r.code, 0, r.stderr);
    r = await kubectl(srv.kubeconfig, [
      'patch',
      'node',
      'pynode',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { nodeInfo: nodeInfo(facts) } }),
    ]);
    assert.equal(r.code, 0, r.stderr);

    const py = await runPython(SCRIPT, [srv.kubeconfig, manifest, 'pynode']);
    assert.equal(py.code, 0, py.err);
    const out = JSON.parse(py.out.trim().split('\n').pop()!);
    // Byte for byte, with the newline Go's json.Encoder ends a body with.
    assert.deepEqual(out.conflict, [
      [
        409,
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"py\\" already exists","reason":"AlreadyExists","details":{"name":"py","group":"apps","kind":"deployments"},"code":409}\n',
      ],
      [
        409,
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"pycm\\" already exists","reason":"AlreadyExists","details":{"name":"pycm","kind":"configmaps"},"code":409}\n',
      ],
    ]);
    assert.ok(
      out.events.some((e: string[]) => e[0] === 'ADDED' && e[1] === 'pycm'),
      JSON.stringify(out.events),
    );
    assert.ok(
      out.events.some((e: string[]) => e[0] === 'ADDED' && e[1] === 'watched'),
      JSON.stringify(out.events),
    );
    assert.equal(out.kubeProxyVersion, '');
    assert.ok(out.nodes.includes('pynode'));
  });
});
