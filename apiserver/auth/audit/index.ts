// Auditing from --audit-policy-file and the log/webhook backends. Without a
// policy file nothing is audited, as in Kubernetes.
import type { Auditor, AuditHandle, SecurityDeps } from '../types';
import type { Req, Res } from '../../server/http';
import type { RequestInfo } from '../../endpoints/request-info';
import type { UserInfo } from '../../registry/context';
import { evaluatePolicy, loadPolicy, type Policy } from './policy';
import { RequestAudit } from './event';
import { BatchBackend, BlockingBackend, TruncatingBackend, UnionBackend, type Backend } from './backends';
import { LogBackend } from './log-backend';
import { WebhookBackend, loadWebhookKubeconfig } from './webhook-backend';

export { evaluatePolicy, loadPolicy } from './policy';
export type { AuditEvent } from './event';

const SUPPORTED_VERSIONS = ['audit.k8s.io/v1'];

/** Handle of a request the policy does not audit. */
const NOOP: AuditHandle = {
  get annotations() {
    return {};
  },
  setUser() {},
  end() {},
};

function withMode(
  inner: Backend,
  mode: string,
  batch: ConstructorParameters<typeof BatchBackend>[1],
  truncate: { enabled: boolean; maxEventSize: number; maxBatchSize: number },
): Backend {
  const t = truncate.enabled
    ? new TruncatingBackend(inner, {
        maxEventSize: truncate.maxEventSize,
        maxBatchSize: truncate.maxBatchSize,
      })
    : inner;
  if (mode === 'batch') return new BatchBackend(t, batch);
  return new BlockingBackend(t, mode === 'blocking-strict');
}

export interface AuditorOptions {
  policy: Policy;
  backend: Backend;
  version: string;
}

export class PolicyAuditor implements Auditor {
  constructor(private readonly o: AuditorOptions) {}

  begin(req: Req, res: Res, info: RequestInfo, user?: UserInfo): AuditHandle {
    const u: UserInfo = user ?? { name: '', groups: [] };
    const decision = evaluatePolicy(this.o.policy, u, info);
    if (decision.level === 'None') return NOOP;
    return new RequestAudit(this.o.backend, decision, req, res, info, u, this.o.version);
  }

  stop(): Promise<void> {
    return this.o.backend.shutdown();
  }
}

export async function buildAuditor(deps: SecurityDeps): Promise<Auditor | undefined> {
  const v = deps.values;
  const policyFile = v.auditPolicyFile as string | undefined;
  const logPath = v.auditLogPath as string | undefined;
  const webhookFile = v.auditWebhookConfigFile as string | undefined;
  for (const [flag, value] of [
    ['audit-log-version', v.auditLogVersion],
    ['audit-webhook-version', v.auditWebhookVersion],
  ] as const)
    if (value && !SUPPORTED_VERSIONS.includes(String(value)))
      throw new Error(`invalid --${flag}: "${value}": supported versions: ${SUPPORTED_VERSIONS.join(', ')}`);
  if (!policyFile) return undefined;
  const policy = loadPolicy(policyFile);
  const backends: Backend[] = [];
  if (logPath) {
    const format = (v.auditLogFormat as string) === 'legacy' ? 'legacy' : 'json';
    const log = new LogBackend(logPath, format, {
      maxSizeMB: Number(v.auditLogMaxsize ?? 0),
      maxAgeDays: Number(v.auditLogMaxage ?? 0),
      maxBackups: Number(v.auditLogMaxbackup ?? 0),
      compress: !!v.auditLogCompress,
    });
    backends.push(
      withMode(
        log,
        String(v.auditLogMode ?? 'blocking'),
        {
          bufferSize: Number(v.auditLogBatchBufferSize ?? 10000),
          maxBatchSize: Number(v.auditLogBatchMaxSize ?? 1),
          maxWaitMs: Number(v.auditLogBatchMaxWait ?? 0),
          throttleEnable: !!v.auditLogBatchThrottleEnable,
          throttleQPS: Number(v.auditLogBatchThrottleQps ?? 0),
          throttleBurst: Number(v.auditLogBatchThrottleBurst ?? 0),
        },
        {
          enabled: !!v.auditLogTruncateEnabled,
          maxEventSize: Number(v.auditLogTruncateMaxEventSize ?? 102400),
          maxBatchSize: Number(v.auditLogTruncateMaxBatchSize ?? 10485760),
        },
      ),
    );
  }
  if (webhookFile) {
    const webhook = new WebhookBackend(
      loadWebhookKubeconfig(webhookFile),
      Number(v.auditWebhookInitialBackoff ?? 10_000),
      String(v.auditWebhookVersion ?? 'audit.k8s.io/v1'),
    );
    backends.push(
      withMode(
        webhook,
        String(v.auditWebhookMode ?? 'batch'),
        {
          bufferSize: Number(v.auditWebhookBatchBufferSize ?? 10000),
          maxBatchSize: Number(v.auditWebhookBatchMaxSize ?? 400),
          maxWaitMs: Number(v.auditWebhookBatchMaxWait ?? 30_000),
          throttleEnable: v.auditWebhookBatchThrottleEnable !== false,
          throttleQPS: Number(v.auditWebhookBatchThrottleQps ?? 10),
          throttleBurst: Number(v.auditWebhookBatchThrottleBurst ?? 15),
        },
        {
          enabled: !!v.auditWebhookTruncateEnabled,
          maxEventSize: Number(v.auditWebhookTruncateMaxEventSize ?? 102400),
          maxBatchSize: Number(v.auditWebhookTruncateMaxBatchSize ?? 10485760),
        },
      ),
    );
  }
  if (!backends.length) return undefined;
  return new PolicyAuditor({
    policy,
    backend: backends.length === 1 ? backends[0] : new UnionBackend(backends),
    version: 'audit.k8s.io/v1',
  });
}
