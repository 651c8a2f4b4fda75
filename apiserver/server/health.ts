// /healthz, /livez and /readyz with named checks: `verbose` lists them,
// `exclude=<check>` skips one, `/livez/<check>` asks for one. A failing check
// makes the endpoint answer 500 with the failed check's reason hidden unless verbose.

export type HealthCheck = () => Promise<void> | void;

export interface HealthResult {
  code: number;
  body: string;
}

export class HealthEndpoint {
  private readonly checks: { name: string; check: HealthCheck }[] = [];

  constructor(readonly path: 'healthz' | 'livez' | 'readyz') {}

  add(name: string, check: HealthCheck): void {
    this.checks.push({ name, check });
  }

  names(): string[] {
    return this.checks.map((c) => c.name);
  }

  async serve(subpath: string, query: URLSearchParams): Promise<HealthResult> {
    if (subpath) {
      const one = this.checks.find((c) => c.name === subpath);
      if (!one) return { code: 404, body: '404 page not found\n' };
      try {
        await one.check();
        return { code: 200, body: 'ok' };
      } catch (err) {
        return { code: 500, body: `internal server error: ${errText(err)}\n` };
      }
    }
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')));
    const lines: string[] = [];
    let failed = false;
    const results = await Promise.all(
      this.checks.map(async (c) => {
        if (excluded.has(c.name)) return { c, ok: true, excluded: true, err: '' };
        try {
          await c.check();
          return { c, ok: true, excluded: false, err: '' };
        } catch (err) {
          return { c, ok: false, excluded: false, err: errText(err) };
        }
      }),
    );
    for (const r of results) {
      if (r.excluded) lines.push(`[+]${r.c.name} excluded: ok`);
      else if (r.ok) lines.push(`[+]${r.c.name} ok`);
      else {
        failed = true;
        lines.push(
          verbose ? `[-]${r.c.name} failed: reason withheld` : `[-]${r.c.name} failed: reason withheld`,
        );
      }
    }
    for (const name of excluded) {
      if (!this.checks.some((c) => c.name === name))
        lines.push(`warn: some health checks cannot be excluded: no matches for "${name}"`);
    }
    if (failed) return { code: 500, body: `${lines.join('\n')}\n${this.path} check failed\n` };
    if (!verbose) return { code: 200, body: 'ok' };
    return { code: 200, body: `${lines.join('\n')}\n${this.path} check passed\n` };
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
