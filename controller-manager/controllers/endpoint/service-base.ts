// A controller keyed by Service that reacts to the pods its selector picks
// (the Endpoints and EndpointSlice controllers).
import type { ControllerContext } from '../../controller';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, keyOf, unwrap, type Obj } from '../util/base';
import { podInformer } from '../util/informers';
import { serviceSelects } from '../util/endpoints';

export abstract class ServicePodController extends QueueController {
  protected readonly services: SharedIndexInformer<Obj>;
  protected readonly pods: SharedIndexInformer<Obj>;

  constructor(ctx: ControllerContext, name: string, workers: number) {
    super(ctx, { name, workers });
    this.services = ctx.informers.forResource<Obj>('services');
    this.pods = podInformer(ctx);
    this.waitFor(this.services, this.pods);
    this.services.addEventHandler({
      onAdd: (s) => this.enqueue(keyOf(s)),
      onUpdate: (_o, s) => this.enqueue(keyOf(s)),
      onDelete: (s) => this.enqueue(keyOf(unwrap(s))),
    });
    this.pods.addEventHandler({
      onAdd: (p) => this.podChanged(p),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (!this.podEndpointChanged(old, cur)) return;
        this.podChanged(cur);
        if (JSON.stringify(old.metadata.labels) !== JSON.stringify(cur.metadata.labels)) this.podChanged(old);
      },
      onDelete: (p) => this.podChanged(unwrap(p)),
    });
  }

  /** Whether anything an endpoint shows changed (podEndpointsChanged). */
  private podEndpointChanged(old: Obj, cur: Obj): boolean {
    const view = (p: Obj) =>
      JSON.stringify([
        p.metadata.labels,
        p.metadata.deletionTimestamp,
        p.status?.podIP,
        p.status?.podIPs,
        p.status?.phase,
        (p.status?.conditions ?? []).find((c: any) => c.type === 'Ready')?.status,
        p.spec?.nodeName,
        p.spec?.hostname,
        p.spec?.subdomain,
        (p.spec?.containers ?? []).map((c: any) => c.ports),
      ]);
    return view(old) !== view(cur);
  }

  private podChanged(pod: Obj): void {
    for (const svc of this.services.lister().namespace(pod.metadata.namespace!).list())
      if (serviceSelects(svc, pod)) this.enqueue(keyOf(svc));
  }
}
