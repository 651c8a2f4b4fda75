// The user a trusted front proxy names in its request headers (k8s.io/apiserver's
// requestheader authenticator, once the proxy's client certificate is
// verified): the first non-empty username header, the uid, every group header
// value, and the extra headers by prefix (keys unescaped, lower case). Both the
// apiserver (--requestheader-*) and extension servers behind it (metrics-server)
// read callers this way.

export interface RequestHeaderNames {
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraPrefixes: string[];
}

export interface HeaderUser {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

function unescape(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

/** From Node's rawHeaders (name, value, name, value ...); undefined when no username header is set. */
export function userFromRequestHeaders(
  rawHeaders: string[],
  names: RequestHeaderNames,
): HeaderUser | undefined {
  const values = (lower: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i + 1 < rawHeaders.length; i += 2)
      if (rawHeaders[i].toLowerCase() === lower) out.push(rawHeaders[i + 1]);
    return out;
  };
  const first = (headers: string[]) => {
    for (const h of headers) {
      const v = values(h.toLowerCase()).find((x) => x.trim());
      if (v) return v;
    }
    return '';
  };
  const name = first(names.usernameHeaders);
  if (!name) return undefined;
  const uid = first(names.uidHeaders);
  const groups = names.groupHeaders.flatMap((h) => values(h.toLowerCase()));
  const extra: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const h = rawHeaders[i].toLowerCase();
    for (const p of names.extraPrefixes) {
      const lp = p.toLowerCase();
      if (!h.startsWith(lp) || h.length === lp.length) continue;
      (extra[unescape(h.slice(lp.length))] ??= []).push(rawHeaders[i + 1]);
    }
  }
  return { name, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
