// The controller manager run inside an apiserver process (--run-controller-manager, what
// the envtest kube-apiserver asset sets): every controller but the scheduler, through
// the apiserver's loopback client, with no secure port and no leader election — the
// process is the whole control plane of a throw-away test cluster. Nothing of it is
// loaded before `apiserverReady` (cmd/apiserver.ts: the first client request after the
// post-start hooks): its ~250 modules and the controllers' start cost ~1 s of CPU that
// would otherwise stand in the way of /healthz and of the client's first request.
import type { ClientConfig } from '../../shared/client';
import { logger } from '../../shared/log';
import type { RunningControllerManager } from './manager';

const log = logger('controller-manager');

export interface EmbeddedControllerManager {
  /** Resolves when the controllers run (undefined if they could not start: logged). */
  started: Promise<RunningControllerManager | undefined>;
  stop(): Promise<void>;
}

/**
 * kube's 5 s wait before a deleted namespace is emptied lets other apiservers and etcd
 * members catch up; in this process there is one apiserver and nothing to wait for.
 */
const EMBEDDED_NAMESPACE_DELETION_GRACE_MS = 0;

export function startEmbeddedControllerManager(
  apiserverReady: Promise<unknown>,
  loopback: () => Promise<ClientConfig>,
): EmbeddedControllerManager {
  // Stopped before it leads (envtest may stop right after ready): it does not start, or stops
  // without waiting for its controllers to come up.
  let stopping = false;
  let stopped!: () => void;
  const stopSignal = new Promise<void>((r) => (stopped = r));
  let starting: Promise<RunningControllerManager | undefined> | undefined;
  const created = apiserverReady.then(() => {
    if (stopping) return undefined;
    starting = (async () => {
      const config = await loopback();
      if (stopping) return undefined;
      log.v(2)?.info('starting the in-process controller manager');
      const [{ startControllerManager }, { controllerManagerFlags }, { defaultFlagValues }] =
        await Promise.all([
          import('./manager.js'),
          import('./options.js'),
          import('../../shared/options/defaults.js'),
        ]);
      const values = defaultFlagValues(controllerManagerFlags, {
        securePort: 0,
        leaderElect: false,
        controllers: ['*', '-scheduler'],
        namespaceDeletionGraceMs: EMBEDDED_NAMESPACE_DELETION_GRACE_MS,
      });
      return stopping ? undefined : startControllerManager(values, { config });
    })().catch((err) => {
      log.error('the in-process controller manager did not start', { err: String(err) });
      return undefined;
    });
    return starting;
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
      await (await starting)?.stop({ clientGraceMs: 0 });
    },
  };
}
