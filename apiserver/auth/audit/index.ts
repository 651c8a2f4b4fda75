// Auditing from --audit-policy-file and the log/webhook backends.
import type { Auditor, SecurityDeps } from '../types';

export async function buildAuditor(_deps: SecurityDeps): Promise<Auditor | undefined> {
  return undefined;
}
