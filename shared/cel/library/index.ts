// The Kubernetes CEL libraries, registered once on the base environment.
import type { Environment } from '@marcbachmann/cel-js';
import { registerAuthz } from './authz';
import { registerComprehensions } from './comprehensions';
import { registerConversions } from './conversions';
import { registerFormat } from './format';
import { registerIP } from './ip';
import { registerListExtensions } from './list-extensions';
import { registerLists } from './lists';
import { registerOptionals } from './optionals';
import { registerQuantity } from './quantity';
import { registerRegex } from './regex';
import { registerSemver } from './semver';
import { registerSets } from './sets';
import { registerStrings } from './strings';
import { registerURLs } from './urls';

export function registerKubernetesLibraries(env: Environment): void {
  registerConversions(env);
  registerStrings(env);
  registerLists(env);
  registerListExtensions(env);
  registerComprehensions(env);
  registerSets(env);
  registerOptionals(env);
  registerRegex(env);
  registerURLs(env);
  registerQuantity(env);
  registerIP(env);
  registerSemver(env);
  registerFormat(env);
  registerAuthz(env);
}
