// A controller manager in the test process, against a test apiserver: no
// secure port and no leader election unless asked, only the named controllers.
import { Client } from '../../shared/client';
import { defaultFlagValues } from '../../shared/options/defaults';
import type { FlagValues } from '../../shared/options/flags';
import type { ControllerDescriptor } from '../controller';
import { startControllerManager, type RunningControllerManager } from './manager';
import { controllerManagerFlags } from './options';
import { allControllers } from './controllers';

export interface TestControllerManager {
  manager: RunningControllerManager;
  /** A client of its own for the test (no rate limit). */
  client: Client;
  stop(): Promise<void>;
}

export async function startTestControllerManager(
  kubeconfig: string,
  controllers: string[],
  overrides: FlagValues = {},
  descriptors: ControllerDescriptor[] = allControllers(),
): Promise<TestControllerManager> {
  const values = defaultFlagValues(controllerManagerFlags, {
    kubeconfig,
    securePort: 0,
    leaderElect: false,
    controllers,
    kubeApiQps: -1,
    ...overrides,
  });
  const manager = await startControllerManager(values, { descriptors });
  await manager.leading;
  const client = Client.create(manager.client.config, { qps: -1 });
  return {
    manager,
    client,
    async stop() {
      await client.close();
      await manager.stop();
    },
  };
}
