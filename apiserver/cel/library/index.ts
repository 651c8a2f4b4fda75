// The Kubernetes CEL libraries, registered once on the base environment.
import type { Environment } from '@marcbachmann/cel-js';
import { registerLists } from './lists';
import { registerQuantity } from './quantity';
import { registerRegex } from './regex';
import { registerStrings } from './strings';
import { registerURLs } from './urls';

export function registerKubernetesLibraries(env: Environment): void {
  registerStrings(env);
  registerLists(env);
  registerRegex(env);
  registerURLs(env);
  registerQuantity(env);
}
