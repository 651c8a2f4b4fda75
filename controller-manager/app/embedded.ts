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
  const started = apiserverReady
    .then(async () => {
      const manager = await startControllerManager(values, { config: await loopback() });
      await manager.leading;
      return manager;
    })
    .catch((err) => {
      log.error('the in-process controller manager did not start', { err: String(err) });
      return undefined;
    });
  return {
    started,
    async stop() {
      // The apiserver these requests go to stops next, in this process: nothing to wait for.
      await (await started)?.stop({ clientGraceMs: 0 });
    },
  };
}
