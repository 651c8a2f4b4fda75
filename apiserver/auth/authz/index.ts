// Authorization from --authorization-mode (an ordered chain behind the
// system:masters superuser check), impersonation, RBAC escalation prevention,
// the RBAC bootstrap policy and ClusterRole aggregation, and the
// authorization.k8s.io review APIs.
import type { SecurityDeps, PostStartHook } from '../types';
import type { ResourceBehaviour } from '../../registry/registry';
import type { UserInfo } from '../../registry/context';
import type { RequestInfo } from '../../endpoints/request-info';
import type { Req } from '../../server/http';
import { attributesOf, type Authorizer } from './types';
import { AlwaysAllow, AlwaysDeny, PrivilegedGroups, UnionAuthorizer, enforce } from './union';
import { ABACAuthorizer, loadPolicyFile } from './abac';
import { RBACAuthorizer, RBACIndex } from './rbac';
import { NodeAuthorizer, NodeGraph } from './node';
import { WebhookAuthorizer } from './webhook';
import { EscalationCheck } from './escalation';
import { AggregationController } from './aggregation';
import { bootstrapRBAC } from './bootstrap';
import { makeImpersonation } from '../impersonation';
import { authorizationReviews } from '../reviews/authorization';

export interface Authorization {
  authorize(user: UserInfo, info: RequestInfo, req: Req): Promise<void>;
  impersonate(req: Req, user: UserInfo, info: RequestInfo): Promise<UserInfo>;
  behaviours: Record<string, ResourceBehaviour>;
  postStartHooks: PostStartHook[];
  /** The server's authorizer chain (review APIs, escalation checks, tests). */
  authorizer?: Authorizer;
  stop?(): Promise<void>;
}

export async function buildAuthorization(deps: SecurityDeps): Promise<Authorization> {
  const modes: string[] = (deps.values.authorizationMode as string[] | undefined)?.length
    ? (deps.values.authorizationMode as string[])
    : ['AlwaysAllow'];
  const rbacIndex = new RBACIndex(deps.registry);
  const closers: (() => void)[] = [() => rbacIndex.stop()];
  const chain: Authorizer[] = [new PrivilegedGroups(['system:masters'])];
  for (const mode of modes) {
    switch (mode) {
      case 'AlwaysAllow':
        chain.push(new AlwaysAllow());
        break;
      case 'AlwaysDeny':
        chain.push(new AlwaysDeny());
        break;
      case 'ABAC': {
        const file = deps.values.authorizationPolicyFile as string | undefined;
        if (!file) throw new Error('authorization-mode ABAC requires --authorization-policy-file');
        chain.push(new ABACAuthorizer(loadPolicyFile(file)));
        break;
      }
      case 'RBAC':
        chain.push(new RBACAuthorizer(rbacIndex));
        break;
      case 'Node': {
        const graph = new NodeGraph(deps.registry);
        closers.push(() => graph.stop());
        chain.push(new NodeAuthorizer(graph));
        break;
      }
      case 'Webhook': {
        const file = deps.values.authorizationWebhookConfigFile as string | undefined;
        if (!file) throw new Error('authorization-mode Webhook requires --authorization-webhook-config-file');
        const w = new WebhookAuthorizer({
          configFile: file,
          version: (deps.values.authorizationWebhookVersion as 'v1' | 'v1beta1') ?? 'v1beta1',
          authorizedTTLMs: (deps.values.authorizationWebhookCacheAuthorizedTtl as number) ?? 300_000,
          unauthorizedTTLMs: (deps.values.authorizationWebhookCacheUnauthorizedTtl as number) ?? 30_000,
        });
        closers.push(() => w.close());
        chain.push(w);
        break;
      }
      default:
        throw new Error(`unknown authorization mode ${mode} specified`);
    }
  }
  if (modes.includes('ABAC') === false && deps.values.authorizationPolicyFile)
    throw new Error('cannot specify --authorization-policy-file without mode ABAC');
  if (modes.includes('Webhook') === false && deps.values.authorizationWebhookConfigFile)
    throw new Error('cannot specify --authorization-webhook-config-file without mode Webhook');

  const union = new UnionAuthorizer(chain);
  const escalation = new EscalationCheck(rbacIndex, () => union);
  const aggregation = new AggregationController(deps.registry, rbacIndex);
  closers.push(() => aggregation.stop());
  const impersonate = makeImpersonation(() => union);

  return {
    authorizer: union,
    async authorize(user, info, req) {
      const a = attributesOf(user, info, req);
      enforce(a, await union.authorize(a));
    },
    impersonate: (req, user) => impersonate(req, user),
    behaviours: { ...escalation.behaviours(), ...authorizationReviews(() => union) },
    postStartHooks: [
      {
        name: 'rbac/bootstrap-roles',
        run: async () => {
          const registry = deps.registry();
          await bootstrapRBAC(registry);
          await rbacIndex.start();
          await aggregation.start();
        },
      },
    ],
    async stop() {
      for (const c of closers) c();
    },
  };
}
