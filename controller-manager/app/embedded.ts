// The controller manager run inside an apiserver process (--run-controller-manager, what
// the envtest kube-apiserver asset sets): every controller but the scheduler, through
// the apiserver's loopback client, with no secure port and no leader election — the
// process is the whole control plane of a throw-away test cluster. It starts once the
// apiserver's post-start hooks are done, so it does not slow the way to /healthz.
import type { ClientConfig } from '../../shared/client';
import { logger } from '../../shared/log';
import { defaultFlagValues } from '../../shared/options/defaults';
import { startControllerManager, type RunningControllerManager } from './manager';
import { controllerManagerFlags } from './options';

const log = logger('controller-manager');

export interface EmbeddedControllerManager {
  /** Resolves when the controllers run (undefined if they could not start: logged). */
  started: Promise<RunningControllerManager | undefined>;
  stop(): Promise<void>;
}

export function startEmbeddedControllerManager(
  apiserverReady: Promise<unknown>,
  loopback: () => Promise<ClientConfig>,
): EmbeddedControllerManager {
  const values = defaultFlagValues(controllerManagerFlags, {
    securePort: 0,
    leaderElect: false,
    controllers: ['*', '-scheduler'],
  });
  // Stopped before it leads (envtest may stop right after ready): it does not start, or stops
  // without waiting for its controllers to come up.
  let stopping = false;
  let stopped!: () => void;
  const stopSignal = new Promise<void>((r) => (stopped = r));
  const created = apiserverReady
    .then(async () => {
      if (stopping) return undefined;
      const config = await loopback();
      return stopping ? undefined : startControllerManager(values, { config });
    })
    .catch((err) => {
      log.error('the in-process controller manager did not start', { err: String(err) });
      return undefined;
    });
  const started = created.then(async (manager) => {
    if (manager) await Promise.race([manager.leading, stopSignal]);
    return stopping ? undefined : manager;
  });
  return {
    started,
    async stop() {
      stopping = true;
      stopped();
      // The apiserver these requests go to stops next, in this process: nothing to wait for.
      await (await created)?.stop({ clientGraceMs: 0 });
    },
  };
}
