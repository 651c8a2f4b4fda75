// CEL benchmark (issue 19): the cost of one custom resource create validated
// by x-kubernetes-validations against the same create without rules. Figures
// only, never pass/fail. The real apiserver as a separate process (gate
// CustomResourceValidationExpressions on), two CRDs that differ only in their
// rules, creates one at a time over TLS. Reported per create: latency
// percentiles and the apiserver's CPU time (user + system, from /proc), the
// figure that holds on a loaded machine.
//
//   npm run build && node dist/bench/cel.js [--creates 2000] [--warmup 200]
//
// The apiserver is stopped on the way out, on errors and on SIGINT/SIGTERM too.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { Api } from './lib/api';
import { cpuSeconds, removeDir, startApiserver, tempDir, type Apiserver } from './lib/procs';
import { ms, summarize } from './lib/stats';

const RULES = [
  { rule: 'self.minReplicas <= self.replicas', message: 'replicas below minReplicas' },
  { rule: "self.name.matches('^[a-z][a-z0-9-]*$')", message: 'bad name' },
  { rule: 'self.ports.all(p, p.port > 0 && p.port < 65536)', message: 'port out of range' },
  { rule: 'self.ports.all(a, self.ports.exists_one(b, a.name == b.name))', message: 'duplicate port name' },
];

function crd(group: string, withRules: boolean): unknown {
  const spec: Record<string, unknown> = {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 63 },
      replicas: { type: 'integer' },
      minReplicas: { type: 'integer' },
      ports: {
        type: 'array',
        maxItems: 16,
        items: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 15 }, port: { type: 'integer' } },
        },
      },
    },
    ...(withRules ? { 'x-kubernetes-validations': RULES } : {}),
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  };
}

const widget = (group: string, i: number) => ({
  apiVersion: `${group}/v1`,
  kind: 'Widget',
  metadata: { name: `w-${i}` },
  spec: {
    name: `app-${i}`,
    replicas: 3,
    minReplicas: 1,
    ports: [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
      { name: 'metrics', port: 9090 },
    ],
  },
});

async function waitServed(api: Api, group: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await api.call('GET', `/apis/${group}/v1/namespaces/default/widgets`)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${group} not served`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function creates(api: Api, group: string, from: number, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = from; i < from + n; i++) {
    const r = await api.call('POST', `/apis/${group}/v1/namespaces/default/widgets`, widget(group, i));
    if (r.status !== 201) throw new Error(`create ${group}: ${r.status} ${r.body.toString().slice(0, 300)}`);
    times.push(r.ms);
  }
  return times;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { creates: { type: 'string', default: '2000' }, warmup: { type: 'string', default: '200' } },
  });
  const n = Number(values.creates);
  const warmup = Number(values.warmup);
  const dir = tempDir('bench-cel');
  let srv: Apiserver | undefined;
  const stop = async () => {
    await srv?.stop();
    removeDir(dir);
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void stop().finally(() => process.exit(130)));
  try {
    srv = await startApiserver({
      dir,
      dataDir: join(dir, 'data'),
      certDir: join(dir, 'certs'),
      args: ['--feature-gates', 'CustomResourceValidationExpressions=true'],
      label: 'apiserver-cel',
    });
    const api = new Api(srv.target, 2);
    const cases = [
      { label: 'without rules', group: 'plain.bench.example.com', rules: false },
      { label: `with ${RULES.length} CEL rules`, group: 'cel.bench.example.com', rules: true },
    ];
    for (const c of cases) {
      await api.must(
        'POST',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        crd(c.group, c.rules),
      );
      await waitServed(api, c.group);
    }
    for (const c of cases) await creates(api, c.group, 0, warmup);
    // Measured in alternating rounds, so both cases see the same JIT state and the same neighbours.
    const ROUNDS = 10;
    const per = Math.ceil(n / ROUNDS);
    const times: number[][] = cases.map(() => []);
    const cpuSecs = cases.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const cpu0 = cpuSeconds(srv.pid);
        times[i].push(...(await creates(api, cases[i].group, warmup + round * per, per)));
        cpuSecs[i] += cpuSeconds(srv.pid) - cpu0;
      }
    }
    const rows: string[] = [];
    const medians: number[] = [];
    const cpuPerCreate: number[] = [];
    cases.forEach((c, i) => {
      const s = summarize(Float64Array.from(times[i]).sort());
      const cpuMs = (cpuSecs[i] * 1000) / times[i].length;
      medians.push(s.p50);
      cpuPerCreate.push(cpuMs);
      rows.push(
        `${c.label.padEnd(24)} p50 ${ms(s.p50).padStart(9)}  p90 ${ms(s.p90).padStart(9)}  p99 ${ms(s.p99).padStart(9)}  apiserver CPU ${ms(cpuMs).padStart(9)}`,
      );
    });
    process.stdout.write(
      `one custom resource create, ${n} sequential creates per case in ${ROUNDS} alternating rounds, after ${warmup} warm-up each:\n`,
    );
    process.stdout.write(rows.map((r) => `  ${r}\n`).join(''));
    process.stdout.write(
      `  CEL rules add ${ms(medians[1] - medians[0])} to the median create, ${ms(cpuPerCreate[1] - cpuPerCreate[0])} of apiserver CPU per create\n`,
    );
  } finally {
    await stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
});
