// What the apiserver serves of the established CRDs: each one's build
// (served.ts) added to the registry — its endpoints and, through the
// registry's change listeners, discovery — its storage counted and stopped
// with the built-in stores, and the OpenAPI documents republished whenever
// the set changes. A CRD naming a built-in resource is never served.
import { logger } from '../../../shared/log';
import type { OpenAPIService, Schema as OpenAPISchema } from '../../../shared/api/openapi';
import type { ResourceFacts } from '../../../shared/api/schema-types';
import type { Registry } from '../registry';
import { buildServing, servingFingerprint, type CRDServing } from './served';
import type { WebhookServiceResolver } from '../../aggregator/service-resolver';
import type { CRD } from './types';

const log = logger('apiextensions');

/** How long a replaced build keeps its watch cache (requests in flight finish). */
const RETIRE_AFTER_MS = 5000;

export class ServedCRDs {
  private readonly serving = new Map<string, CRDServing>();
  /** Watch caches of replaced or removed builds, stopped a little later. */
  private readonly retired = new Set<CRDServing>();
  /** CRDs whose group and plural are a built-in resource's (never served). */
  private readonly overlapping = new Set<string>();
  private readonly builtinFacts: ResourceFacts[];

  constructor(
    private readonly d: {
      registry: Registry;
      /** Where conversion webhooks given as a Service are reached. */
      services: WebhookServiceResolver;
      /** Receives the published schemas of established CRDs. */
      openapi?: OpenAPIService;
      /** Whether the CRD is being deleted (its endpoints refuse creates then). */
      terminating(name: string): boolean;
      /** Runs fn after ms, unless the controller stops first. */
      later(fn: () => void, ms: number): void;
    },
  ) {
    const registry = d.registry;
    this.builtinFacts = registry
      .all()
      .filter((s) => !registry.isDynamic(s.info.group, s.info.version, s.info.resource))
      .map((s) => s.info);
  }

  /** The CRDs served right now (names). */
  names(): string[] {
    return [...this.serving.keys()];
  }

  get(name: string): CRDServing | undefined {
    return this.serving.get(name);
  }

  /** Serves the CRD as it is now (a no-op when what is served is built from the same spec). */
  serve(crd: CRD): void {
    const name = crd.metadata.name;
    const current = this.serving.get(name);
    if (current && current.fingerprint === servingFingerprint(crd)) return;
    if (this.overlapsBuiltin(crd)) {
      // The built-in resource keeps its endpoints (and its keys in storage).
      if (!this.overlapping.has(name))
        log.warn('CRD names a resource the server already serves; the built-in one is kept', { crd: name });
      this.overlapping.add(name);
      this.unserve(name);
      return;
    }
    this.overlapping.delete(name);
    let next: CRDServing;
    try {
      next = buildServing(crd, {
        registry: this.d.registry,
        services: this.d.services,
        terminating: () => this.d.terminating(name),
      });
    } catch (err) {
      log.error('cannot serve CRD', { crd: name, err: String(err) });
      return;
    }
    if (current) this.retire(current);
    this.d.registry.addServed(next.served);
    // Counted with the built-in stores (apiserver_storage_objects) and stopped with them.
    this.d.registry.stores.push(next.primary);
    this.serving.set(name, next);
    this.publish();
    log.v(2)?.info('serving CRD', { crd: name, versions: next.served.map((s) => s.info.version) });
  }

  unserve(name: string): void {
    const current = this.serving.get(name);
    if (!current) return;
    this.serving.delete(name);
    this.retire(current);
    this.publish();
    log.v(2)?.info('stopped serving CRD', { crd: name });
  }

  /** A built-in resource with the CRD's group and plural: its keys are the built-in's. */
  overlapsBuiltin(crd: CRD): boolean {
    const { group, names } = crd.spec;
    const registry = this.d.registry;
    return registry
      .all()
      .some(
        (s) =>
          s.info.group === group &&
          s.info.resource === names.plural &&
          !registry.isDynamic(s.info.group, s.info.version, s.info.resource),
      );
  }

  /** Everything off the registry at once, watch caches stopped (the controller stops). */
  stop(): void {
    for (const s of [...this.serving.values(), ...this.retired]) {
      this.d.registry.removeServed(s.served);
      this.removeStore(s);
      s.primary.cacher?.stop();
    }
    this.serving.clear();
    this.retired.clear();
  }

  /** Stops serving a replaced or removed build; its watch cache stops once requests in flight are done. */
  private retire(s: CRDServing): void {
    this.d.registry.removeServed(s.served);
    this.removeStore(s);
    this.retired.add(s);
    this.d.later(() => {
      this.retired.delete(s);
      s.primary.cacher?.stop();
    }, RETIRE_AFTER_MS);
  }

  private removeStore(s: CRDServing): void {
    const i = this.d.registry.stores.indexOf(s.primary);
    if (i >= 0) this.d.registry.stores.splice(i, 1);
  }

  private publish(): void {
    const openapi = this.d.openapi;
    if (!openapi) return;
    const facts: ResourceFacts[] = [...this.builtinFacts];
    const v2: Record<string, OpenAPISchema> = {};
    const v3: Record<string, OpenAPISchema> = {};
    for (const s of this.serving.values())
      for (const p of s.published) {
        facts.push(p.facts);
        Object.assign(v2, p.v2);
        Object.assign(v3, p.v3);
      }
    openapi.setResources(facts, { v2, v3 });
  }
}
