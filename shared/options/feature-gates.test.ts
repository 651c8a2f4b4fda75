import assert from 'node:assert/strict';
import { FeatureGates } from './feature-gates';

describe('--feature-gates', () => {
  it('has SPEC.md defaults: beta on, alpha off, GA locked on', () => {
    const g = new FeatureGates();
    assert.equal(g.enabled('APIListChunking'), true);
    assert.equal(g.enabled('RemainingItemCount'), true);
    assert.equal(g.enabled('ProbeTerminationGracePeriod'), false);
    assert.equal(g.enabled('CustomResourceValidationExpressions'), false);
    assert.equal(g.enabled('ServerSideApply'), true);
  });
  it('sets gates and applies AllAlpha/AllBeta to those not set', () => {
    const g = new FeatureGates().set({ APIListChunking: 'false', AllAlpha: 'true', NodeSwap: 'false' });
    assert.equal(g.enabled('APIListChunking'), false);
    assert.equal(g.enabled('ContextualLogging'), true);
    assert.equal(g.enabled('NodeSwap'), false);
    assert.equal(new FeatureGates().set({ AllBeta: 'false' }).enabled('RemainingItemCount'), false);
  });
  it('refuses unknown gates, bad values and locked gates; warns on GA and deprecated ones', () => {
    assert.throws(
      () => new FeatureGates().set({ NoSuchGate: 'true' }),
      /unrecognized feature gate: NoSuchGate/,
    );
    assert.throws(() => new FeatureGates().set({ APIListChunking: 'maybe' }), /invalid value/);
    assert.throws(
      () => new FeatureGates().set({ ServerSideApply: 'false' }),
      /cannot set feature gate ServerSideApply to false, feature is locked to true/,
    );
    assert.match(
      new FeatureGates().set({ ServerSideApply: 'true' }).warnings[0],
      /Setting GA feature gate ServerSideApply=true/,
    );
    assert.match(
      new FeatureGates().set({ DynamicKubeletConfig: 'false' }).warnings[0],
      /deprecated feature gate/,
    );
  });
});
