// --runtime-config: which API group-versions and resources are served.
// GA versions are on by default, beta and alpha off, like Kubernetes; keys
// apply from general to specific (api/all, api/<stage>, group/version, group/version/resource).
import { stageOf, type Stage } from '../api/catalog';

export interface RuntimeConfig {
  versionEnabled(group: string, version: string): boolean;
  resourceEnabled(group: string, version: string, resource: string): boolean;
  /** Deprecation warnings for keys used. */
  warnings: string[];
}

const truthy = (v: string) => {
  if (v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`invalid value "${v}" for runtime-config: must be true or false`);
};

export function parseRuntimeConfig(
  config: Record<string, string> | undefined,
  knownGroupVersions?: Set<string>,
): RuntimeConfig {
  const stageOverrides = new Map<Stage | 'all', boolean>();
  const gvOverrides = new Map<string, boolean>();
  const resourceOverrides = new Map<string, boolean>();
  const warnings: string[] = [];
  for (const [rawKey, rawValue] of Object.entries(config ?? {})) {
    const key = rawKey.trim();
    const on = truthy(rawValue.trim());
    if (key === 'api/all') stageOverrides.set('all', on);
    else if (key === 'api/ga') stageOverrides.set('ga', on);
    else if (key === 'api/beta') stageOverrides.set('beta', on);
    else if (key === 'api/alpha') stageOverrides.set('alpha', on);
    else if (key === 'api/legacy') {
      warnings.push('runtime-config key api/legacy is deprecated; use v1 instead');
      gvOverrides.set('/v1', on);
    } else {
      const parts = key.split('/');
      if (parts[0] === 'v1' && parts.length === 2) {
        // a core resource: v1/<resource>
        resourceOverrides.set(`/v1/${parts[1]}`, on);
      } else if (key === 'v1' || parts.length === 2) {
        const [g, v] = key === 'v1' ? ['', 'v1'] : parts;
        if (knownGroupVersions && !knownGroupVersions.has(`${g}/${v}`))
          throw new Error(`unknown api groupVersion "${key}" in runtime-config`);
        gvOverrides.set(`${g}/${v}`, on);
      } else if (parts.length === 3) {
        const [g, v, r] = parts;
        resourceOverrides.set(`${g}/${v}/${r}`, on);
      } else throw new Error(`invalid runtime-config key "${key}"`);
    }
  }
  const versionEnabled = (group: string, version: string): boolean => {
    const gv = gvOverrides.get(`${group}/${version}`);
    if (gv !== undefined) return gv;
    const stage = stageOf(version);
    const byStage = stageOverrides.get(stage);
    if (byStage !== undefined) return byStage;
    const all = stageOverrides.get('all');
    if (all !== undefined) return all;
    return stage === 'ga';
  };
  return {
    warnings,
    versionEnabled,
    resourceEnabled: (group, version, resource) => {
      const r = resourceOverrides.get(`${group}/${version}/${resource}`);
      if (r !== undefined) return r;
      return versionEnabled(group, version);
    },
  };
}
