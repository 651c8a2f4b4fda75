// The Service CIDR's unreachable route on the real host (root only): a
// connection to an unused address in it fails at once on the host instead of
// leaving it; a stale route is replaced, a route of another type left alone.
// The CIDRs are /30s unique to this process (service-route.test-support.ts); an
// address is dialled only after `ip route get` shows it unreachable, so no
// packet can leave even if something went wrong.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { hasUnreachableRoute, installUnreachableRoutes, removeUnreachableRoutes } from './service-route';
import { routedUnreachable, testServiceCIDR } from './service-route.test-support';

function connectError(address: string): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address, port: 443 });
    socket.on('connect', () => {
      socket.destroy();
      reject(new Error(`connected to ${address}`));
    });
    socket.on('error', (err) => resolve(err));
  });
}

const quietly = (args: string[]) => {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // not there
  }
};

describe('the service CIDR unreachable route', function () {
  this.timeout(20_000);
  const a = testServiceCIDR(30, 0);
  const b = testServiceCIDR(30, 1);

  before(function () {
    if (process.getuid?.() !== 0) this.skip();
  });
  afterEach(() => {
    for (const { cidr } of [a, b]) {
      quietly(['route', 'del', 'unreachable', cidr]);
      quietly(['route', 'del', 'blackhole', cidr]);
    }
  });

  it('makes a connection to an unused ClusterIP fail at once on the host, and goes on removal', async () => {
    const r = installUnreachableRoutes(a.cidr);
    assert.deepEqual(r, { installed: [a.cidr], skipped: [] });
    assert.ok(hasUnreachableRoute(a.cidr));
    // Never dial without the route in place.
    assert.ok(routedUnreachable(a.address), `${a.address} is not routed unreachable`);
    const err = await connectError(a.address);
    assert.ok(['EHOSTUNREACH', 'ENETUNREACH'].includes(err.code ?? ''), String(err));
    removeUnreachableRoutes(a.cidr);
    assert.equal(hasUnreachableRoute(a.cidr), false);
    assert.equal(routedUnreachable(a.address), false);
  });

  it('replaces a stale route of an earlier run, for each CIDR of a dual-stack range', () => {
    execFileSync('ip', ['route', 'add', 'unreachable', a.cidr]);
    const r = installUnreachableRoutes(`${a.cidr},${b.cidr}`);
    assert.deepEqual(r, { installed: [a.cidr, b.cidr], skipped: [] });
    const routes = execFileSync('ip', ['route', 'show', 'exact', a.cidr], { encoding: 'utf8' });
    assert.equal(routes.trim().split('\n').length, 1, routes);
    removeUnreachableRoutes(`${a.cidr},${b.cidr}`);
    assert.equal(hasUnreachableRoute(a.cidr) || hasUnreachableRoute(b.cidr), false);
  });

  it("leaves a route of the host's own for the CIDR alone, and says so", () => {
    execFileSync('ip', ['route', 'add', 'blackhole', a.cidr]);
    const r = installUnreachableRoutes(a.cidr);
    assert.deepEqual(r.installed, []);
    assert.match(r.skipped[0], /ip route add unreachable .* failed: .*File exists/);
    removeUnreachableRoutes(a.cidr);
    const routes = execFileSync('ip', ['route', 'show', 'exact', a.cidr], { encoding: 'utf8' });
    assert.match(routes, /^blackhole /);
  });
});
