import assert from 'node:assert/strict';
import { parseLabelSelector, selectorFromObject, SelectorParseError } from './labels';
import { parseFieldSelector, FieldSelectorParseError } from './fields';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  const m = (s: string) => parseLabelSelector(s).matches(labels);

  it('matches every operator of the string form', () => {
    assert.equal(m(''), true);
    assert.equal(m('app=web'), true);
    assert.equal(m('app==web'), true);
    assert.equal(m('app!=web'), false);
    assert.equal(m('app!=db'), true);
    assert.equal(m('missing!=x'), true);
    assert.equal(m('app in (web,db)'), true);
    assert.equal(m('app notin (web,db)'), false);
    assert.equal(m('tier'), true);
    assert.equal(m('!tier'), false);
    assert.equal(m('!missing'), true);
    assert.equal(m('app=web,tier=front'), true);
    assert.equal(m('app=web,tier=back'), false);
    assert.equal(m('n>4'), true);
    assert.equal(m('n<4'), false);
    assert.equal(m(' app = web , tier '), true);
  });

  it('rejects malformed selectors with a parse error', () => {
    for (const bad of [
      'app in (web',
      'app=',
      '=web',
      'a b',
      'app in ()',
      'x/y/z=1',
      'app=we b',
      'app=-bad-',
    ]) {
      if (bad === 'app=') continue; // an empty value is valid
      assert.throws(() => parseLabelSelector(bad), SelectorParseError, bad);
    }
    assert.equal(parseLabelSelector('app=').matches({ app: '' }), true);
  });

  it('turns structured selectors into requirements; nil selects nothing, {} everything', () => {
    assert.equal(selectorFromObject(null), null);
    assert.equal(selectorFromObject({})!.matches({ any: 'thing' }), true);
    const s = selectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }],
    })!;
    assert.equal(s.matches(labels), true);
    assert.equal(s.matches({ app: 'web' }), false);
    assert.equal(s.toString(), 'app=web,tier in (front)');
  });
});

describe('field selectors', () => {
  it('parses =, ==, != with escapes', () => {
    const s = parseFieldSelector('metadata.name=a\\,b,status.phase!=Running,spec.nodeName==n1');
    assert.deepEqual(s.requirements, [
      { field: 'metadata.name', op: '=', value: 'a,b' },
      { field: 'status.phase', op: '!=', value: 'Running' },
      { field: 'spec.nodeName', op: '=', value: 'n1' },
    ]);
    assert.equal(
      s.matches({ 'metadata.name': 'a,b', 'status.phase': 'Pending', 'spec.nodeName': 'n1' }),
      true,
    );
    assert.equal(s.exactValue('spec.nodeName'), 'n1');
    assert.throws(() => parseFieldSelector('nonsense'), FieldSelectorParseError);
  });
});
