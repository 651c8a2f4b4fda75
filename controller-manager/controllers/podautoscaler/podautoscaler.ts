// The horizontal-pod-autoscaler controller as the controller manager runs it:
// its --horizontal-pod-autoscaler-* options, and the queue that brings every
// HPA to the reconciler (horizontal.ts) once per sync period, as kube's
// fixed-interval rate limiter does.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import type { KubeObject } from '../../../shared/client';
import { runWorkers } from '../../../shared/informers';
import { cachesSynced, go, queueFor } from '../../app/controller-util';
import { durationOption, errMessage, intOption, keyOf, splitKey, unwrap } from '../util/base';
import { HorizontalController, HPA_RESOURCE } from './horizontal';

export interface HPAControllerOptions {
  syncPeriodMs: number;
  downscaleStabilizationMs: number;
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

export function hpaOptions(ctx: ControllerContext): HPAControllerOptions {
  const tol = Number(ctx.options?.horizontalPodAutoscalerTolerance);
  return {
    syncPeriodMs: durationOption(ctx, 'horizontalPodAutoscalerSyncPeriod', 15_000),
    downscaleStabilizationMs: durationOption(ctx, 'horizontalPodAutoscalerDownscaleStabilization', 300_000),
    tolerance:
      Number.isFinite(tol) && ctx.options?.horizontalPodAutoscalerTolerance !== undefined ? tol : 0.1,
    cpuInitializationPeriodMs: durationOption(ctx, 'horizontalPodAutoscalerCpuInitializationPeriod', 300_000),
    initialReadinessDelayMs: durationOption(ctx, 'horizontalPodAutoscalerInitialReadinessDelay', 30_000),
  };
}

export function startHorizontalPodAutoscalerController(ctx: ControllerContext): void {
  const o = hpaOptions(ctx);
  const hpas = ctx.informers.forResource(HPA_RESOURCE);
  const pods = ctx.informers.forResource('pods');
  const controller = new HorizontalController(ctx, o, pods.lister());
  const queue = queueFor<string>(ctx, 'horizontalpodautoscaler');
  // kube's fixed-interval rate limiter: every HPA is looked at once per sync period.
  const enqueue = (hpa: KubeObject) => queue.addAfter(keyOf(hpa), o.syncPeriodMs);
  hpas.addEventHandler(
    {
      onAdd: enqueue,
      onUpdate: (_old, hpa) => enqueue(hpa),
      onDelete: (obj) => {
        const key = keyOf(unwrap(obj));
        queue.forget(key);
        controller.forget(key);
      },
    },
    o.syncPeriodMs,
  );

  const sync = async (key: string): Promise<void> => {
    const hpa = hpas.lister().get(key);
    if (!hpa) {
      controller.forget(key);
      return;
    }
    try {
      await controller.sync(key, hpa);
    } catch (err) {
      if (ctx.signal.aborted) return;
      const [ns, name] = splitKey(key);
      ctx.log.v(2)?.info('failed to reconcile HPA', { namespace: ns, name, err: errMessage(err) });
    } finally {
      if (hpas.lister().get(key)) queue.addAfter(key, o.syncPeriodMs);
    }
  };

  go(ctx, 'horizontal-pod-autoscaler controller', async () => {
    if (!(await cachesSynced(ctx, 'HPA', hpas, pods))) return;
    await runWorkers(queue, sync, {
      workers: intOption(ctx, 'concurrentHorizontalPodAutoscalerSyncs', 5),
      signal: ctx.signal,
    });
  });
}

export const horizontalPodAutoscalerController: ControllerDescriptor = {
  name: 'horizontalpodautoscaling',
  aliases: ['horizontal-pod-autoscaler-controller'],
  start: startHorizontalPodAutoscalerController,
};
