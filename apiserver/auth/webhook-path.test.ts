// Webhook URLs are called with the path cleaned as client-go's rest client does.
import assert from 'node:assert/strict';
import { webhookRequestPath } from './webhook-client';

describe('webhookRequestPath', () => {
  it('cleans the path as Go path.Join does and keeps the query', () => {
    const cases: [string, string][] = [
      ['https://127.0.0.1:9443//validate-apps-v1-deployment', '/validate-apps-v1-deployment'],
      ['https://127.0.0.1:9443//convert?timeout=10s', '/convert?timeout=10s'],
      ['https://h/a/./b/../c', '/a/c'],
      ['https://h/a//b/', '/a/b/'],
      ['https://h', '/'],
      ['https://h/', '/'],
    ];
    for (const [url, path] of cases) assert.equal(webhookRequestPath(new URL(url)), path, url);
  });
});
