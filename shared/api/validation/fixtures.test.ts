// A valid object of every common kind decodes strictly, defaults, and validates
// clean; defaulting twice changes nothing; compiling is lazy, one kind at a time.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { applyDefaults } from '../defaults';
import { decodeBody } from '../field-validation';
import { fieldErrorMessage } from '../field-errors';
import { gvkOf, validateObject } from './index';

import { FIXTURES } from './test-fixtures';

describe('valid fixtures of common kinds', () => {
  for (const [name, fixture] of Object.entries(FIXTURES)) {
    it(`${name} decodes strictly, defaults and validates`, () => {
      const gvk = gvkOf(fixture);
      const { object, warnings } = decodeBody(JSON.stringify(fixture), {
        format: 'json',
        fieldValidation: 'Strict',
        gvk,
      });
      assert.deepEqual(warnings, []);
      applyDefaults(object);
      const errs = validateObject(object);
      assert.deepEqual(errs.map(fieldErrorMessage), []);
    });
    it(`${name} defaults are idempotent`, () => {
      const once = applyDefaults(structuredClone(fixture));
      const twice = applyDefaults(structuredClone(once));
      assert.deepEqual(twice, once);
    });
  }
});

describe('lazy schema compilation', () => {
  it('compiles nothing at import and only the validated kind on first use', () => {
    const script = `
      const v = require(${JSON.stringify(require.resolve('./index'))});
      const ajvAtImport = Object.keys(require.cache).some((f) => /node_modules[\\/]ajv[\\/]/.test(f));
      const before = v.compiledDefinitions().length;
      v.validateObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'b' } });
      const after = v.compiledDefinitions();
      v.validateObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'b' } });
      console.log(JSON.stringify({ ajvAtImport, before, after, again: v.compiledDefinitions().length }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as {
      ajvAtImport: boolean;
      before: number;
      after: string[];
      again: number;
    };
    assert.equal(out.before, 0);
    assert.deepEqual(out.after, ['io.k8s.api.core.v1.ConfigMap']);
    assert.equal(out.again, 1);
    // Import must stay cheap: ajv and the facts load on first use (a module count, not a time).
    assert.equal(out.ajvAtImport, false, 'ajv was loaded at import');
  });
});
