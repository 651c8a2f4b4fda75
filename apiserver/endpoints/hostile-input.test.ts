// Hostile bodies and parameters get a 4xx quickly, never a 5xx: YAML alias
// bombs (as a body and as an apply patch), deep nesting, numeric overflow.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('hostile input', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const bomb = () => {
    const names = 'abcdefghi';
    const lines = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: bomb}',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ];
    for (let l = 1; l < names.length; l++)
      lines.push(
        `${names[l]}: &${names[l]} [${Array(9)
          .fill('*' + names[l - 1])
          .join(',')}]`,
      );
    return lines.join('\n');
  };

  it('answers YAML alias bombs and over-deep YAML with 400 in every body format that takes YAML', async () => {
    const cases: [string, string, string][] = [
      ['POST', cms, 'application/yaml'],
      ['PUT', `${cms}/bomb`, 'application/yaml'],
      ['PATCH', `${cms}/bomb?fieldManager=x`, 'application/apply-patch+yaml'],
    ];
    for (const [method, path, ct] of cases) {
      for (const body of [bomb(), '- '.repeat(100_000) + 'x']) {
        const r = await api(method, path, { body, contentType: ct });
        assert.equal(r.status, 400, `${method} ${ct}: ${r.body.toString().slice(0, 200)}`);
        assert.equal(r.json.reason, 'BadRequest');
      }
    }
    assert.equal((await api('GET', '/readyz')).status, 200);
    assert.equal((await api('GET', `${cms}/bomb`)).status, 404);
  });
});
