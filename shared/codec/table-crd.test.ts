import assert from 'node:assert/strict';
import { crdPrinter } from './table-crd';
import { toTable } from './table';

const NOW = Date.parse('2024-05-01T12:00:00Z');

const certificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: {
    name: 'web-tls',
    namespace: 'default',
    resourceVersion: '42',
    creationTimestamp: '2024-04-29T09:00:00Z',
    labels: { app: 'web' },
  },
  spec: {
    secretName: 'web-tls',
    issuerRef: { name: 'letsencrypt' },
    replicas: 3,
    ratio: 0.75,
    dnsNames: ['a.example.com', 'b.example.com'],
  },
  status: {
    conditions: [
      { type: 'Issuing', status: 'False' },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: 'Certificate is up to date and has not expired',
      },
    ],
    notAfter: '2024-07-28T09:00:00Z',
    renewed: true,
  },
};

describe('Table: custom resources', () => {
  it('no printer columns: Name and Age', () => {
    const p = crdPrinter(undefined);
    assert.deepEqual(
      p.columns.map((c) => [c.name, c.type, c.format, c.priority]),
      [
        ['Name', 'string', 'name', 0],
        ['Age', 'date', '', 0],
      ],
    );
    assert.deepEqual(p.cells(certificate, NOW), ['web-tls', '2d3h']);
    assert.deepEqual(crdPrinter([]).cells(certificate, NOW), ['web-tls', '2d3h']);
  });

  it('declared columns only (no implicit Age), with the kubectl-style paths', () => {
    const p = crdPrinter([
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
      { name: 'App', type: 'string', jsonPath: '.metadata.labels.app', priority: 1 },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Ratio', type: 'number', jsonPath: '.spec.ratio' },
      { name: 'Renewed', type: 'boolean', jsonPath: '.status.renewed' },
      { name: 'Expires', type: 'date', jsonPath: '.status.notAfter' },
      { name: 'Hosts', type: 'string', jsonPath: '.spec.dnsNames' },
      { name: 'Missing', type: 'string', jsonPath: '.status.nothing' },
      {
        name: 'Status',
        type: 'string',
        description: 'Why it is ready',
        jsonPath: '.status.conditions[?(@.type=="Ready")].message',
      },
    ]);
    assert.deepEqual(
      p.columns.map((c) => c.name),
      [
        'Name',
        'Ready',
        'Secret',
        'App',
        'Replicas',
        'Ratio',
        'Renewed',
        'Expires',
        'Hosts',
        'Missing',
        'Status',
      ],
    );
    assert.equal(p.columns[3].priority, 1);
    assert.equal(
      p.columns[1].description,
      'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status',
    );
    assert.equal(p.columns[10].description, 'Why it is ready');
    assert.deepEqual(p.cells(certificate, NOW), [
      'web-tls',
      'True',
      'web-tls',
      'web',
      3,
      0.75,
      true,
      '<invalid>',
      '[a.example.com b.example.com]',
      null,
      'Certificate is up to date and has not expired',
    ]);
  });

  it('type mismatches and creationTimestamp as a date column', () => {
    const p = crdPrinter([
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'N', type: 'integer', jsonPath: '.spec.secretName' },
      { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef' },
      { name: 'Ratio', type: 'integer', jsonPath: '.spec.ratio' },
    ]);
    assert.deepEqual(p.cells(certificate, NOW), ['web-tls', '2d3h', null, 'map[name:letsencrypt]', 0]);
  });

  it('a list renders through toTable with rows and partial objects', () => {
    const p = crdPrinter([
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    ]);
    const t = toTable(
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'CertificateList',
        metadata: { resourceVersion: '50' },
        items: [certificate],
      },
      p,
      {
        now: NOW,
      },
    );
    assert.deepEqual(t.rows[0].cells, ['web-tls', 'True']);
    assert.equal((t.rows[0].object as any).metadata.name, 'web-tls');
    assert.equal(t.metadata.resourceVersion, '50');
  });

  it('an unparseable path serves the columns before it and reports the error', () => {
    const p = crdPrinter([
      { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
      { name: 'Bad', type: 'string', jsonPath: '.spec[?(@.x' },
      { name: 'After', type: 'string', jsonPath: '.spec.replicas' },
    ]);
    assert.deepEqual(
      p.columns.map((c) => c.name),
      ['Name', 'Secret'],
    );
    assert.match(p.error!, /unrecognized column definition/);
    assert.deepEqual(p.cells(certificate, NOW), ['web-tls', 'web-tls']);
  });
});
