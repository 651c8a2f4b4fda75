// Registry credentials for image pulls from a pod's imagePullSecrets, as
// kubelet's credential keyring reads them: kubernetes.io/dockerconfigjson
// ({"auths": {server: entry}}) and the older kubernetes.io/dockercfg ({server:
// entry}); an entry's "auth" (base64 user:password) is split when username and
// password are not given. Which entries apply to an image is the runtime's
// matching (by registry host).
import type { RegistryAuth } from './runtime';

function entries(secret: any): [string, any][] {
  const data = secret?.data ?? {};
  const decode = (b64: string) => {
    try {
      return JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
    } catch {
      return undefined;
    }
  };
  if (secret?.type === 'kubernetes.io/dockerconfigjson' && data['.dockerconfigjson'])
    return Object.entries(decode(data['.dockerconfigjson'])?.auths ?? {});
  if (secret?.type === 'kubernetes.io/dockercfg' && data['.dockercfg'])
    return Object.entries(decode(data['.dockercfg']) ?? {});
  return [];
}

/** The credentials of the secrets, in their order (kubelet tries them in turn). */
export function registryAuths(secrets: any[]): RegistryAuth[] {
  const out: RegistryAuth[] = [];
  for (const s of secrets)
    for (const [server, e] of entries(s)) {
      if (!e || typeof e !== 'object') continue;
      let { username, password } = e as { username?: string; password?: string };
      if ((!username || !password) && typeof e.auth === 'string') {
        const plain = Buffer.from(e.auth, 'base64').toString('utf8');
        const i = plain.indexOf(':');
        if (i > 0) {
          username = plain.slice(0, i);
          password = plain.slice(i + 1);
        }
      }
      out.push({
        serverAddress: server,
        ...(username ? { username } : {}),
        ...(password ? { password } : {}),
        ...(e.identitytoken ? { identityToken: e.identitytoken } : {}),
        ...(e.registrytoken ? { registryToken: e.registrytoken } : {}),
      });
    }
  return out;
}
