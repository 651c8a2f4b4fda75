import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field-errors';
import { validateWithSchema } from './custom-schema';

const schema = {
  type: 'object',
  required: ['spec'],
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        name: { type: 'string', maxLength: 5, pattern: '^[a-z]+$' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', maxItems: 2, items: { type: 'string', format: 'date-time' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        optional: { type: 'string', nullable: true },
      },
    },
  },
};

describe('validateWithSchema (custom resources)', () => {
  it('accepts a valid object and caches the compiled schema', () => {
    const obj = {
      spec: {
        size: 3,
        mode: 'fast',
        name: 'abc',
        port: 'http',
        tags: ['2024-05-01T10:00:00Z'],
        labels: { a: 'b' },
        optional: null,
      },
    };
    assert.deepEqual(validateWithSchema(schema, obj), []);
    assert.deepEqual(validateWithSchema(schema, { spec: { size: 1, port: 8080 } }), []);
  });

  it('takes an integer past 2^53 (a bigint from the JSON codec) as an integer', () => {
    const counter = { type: 'object', properties: { n: { type: 'integer' }, x: { type: 'number' } } };
    assert.deepEqual(validateWithSchema(counter, { n: 2n ** 60n, x: 2n ** 60n }), []);
    assert.deepEqual(validateWithSchema(counter, { n: 'a' }).map(fieldErrorMessage), [
      'n: Invalid value: "string": n in body must be of type integer: "string"',
    ]);
  });

  it("reports with kube-openapi's messages and Kubernetes' paths", () => {
    const errs = validateWithSchema(schema, {
      spec: {
        size: 'big',
        mode: 'medium',
        name: 'ABCDEF',
        port: true,
        tags: ['x', 'y', 'z'],
        labels: { a: 1 },
      },
    }).map(fieldErrorMessage);
    assert.deepEqual(errs.sort(), [
      'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
      'spec.mode: Unsupported value: "medium": supported values: "fast", "slow"',
      'spec.name: Invalid value: "ABCDEF": spec.name in body should match \'^[a-z]+$\'',
      'spec.name: Too long: may not be longer than 5',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      // field-errors.ts leaves the count out; Kubernetes prints "Too many: 3: must have at most 2 items".
      'spec.tags: Too many: must have at most 2 items',
      'spec.tags[0]: Invalid value: "x": spec.tags[0] in body must be of type date-time: "x"',
      'spec.tags[1]: Invalid value: "y": spec.tags[1] in body must be of type date-time: "y"',
      'spec.tags[2]: Invalid value: "z": spec.tags[2] in body must be of type date-time: "z"',
    ]);
    assert.equal(
      validateWithSchema(schema, { spec: { size: 1, tags: ['a', 'b', 'c'] } }).find(
        (e) => e.type === 'FieldValueTooMany',
      )?.badValue,
      3,
    );
    assert.deepEqual(validateWithSchema(schema, {}).map(fieldErrorMessage), ['spec: Required value']);
    assert.deepEqual(validateWithSchema(schema, { spec: { size: 0 } }).map(fieldErrorMessage), [
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
    ]);
  });
});
