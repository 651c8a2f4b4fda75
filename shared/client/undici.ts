// undici's dispatchers and request API, without its index: the index also loads fetch,
// WebSocket, EventSource, the HTTP cache and the mock layer — 110 modules, 1.1 MB of source
// kept resident in every process — where these are 31 modules and 258 KB. The one side
// effect of the index a dispatcher needs is kept: the request API (request, stream,
// pipeline, upgrade, connect) on Dispatcher.prototype. Types come from 'undici' itself.
// The paths are undici 7.30.2's own: package.json pins that version exactly.
/* eslint-disable @typescript-eslint/no-require-imports */
import type * as Undici from 'undici';

const DispatcherBase = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
Object.assign(DispatcherBase.prototype, require('undici/lib/api'));

export const Agent = require('undici/lib/dispatcher/agent') as typeof Undici.Agent;
export type Agent = Undici.Agent;

const { getGlobalDispatcher } = require('undici/lib/global') as { getGlobalDispatcher(): Undici.Dispatcher };

/** undici's request() on the global dispatcher, for one URL. */
export function request(
  url: string | URL,
  opts: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'>,
): Promise<Undici.Dispatcher.ResponseData> {
  const u = new URL(url);
  return getGlobalDispatcher().request({ ...opts, origin: u.origin, path: `${u.pathname}${u.search}` });
}
