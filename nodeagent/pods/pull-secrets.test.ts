import assert from 'node:assert/strict';
import { registryAuths } from './pull-secrets';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('imagePullSecrets as registry credentials', () => {
  it('reads dockerconfigjson and dockercfg secrets, splitting "auth" when needed', () => {
    const auths = registryAuths([
      {
        type: 'kubernetes.io/dockerconfigjson',
        data: {
          '.dockerconfigjson': b64(
            JSON.stringify({
              auths: {
                'registry.example:5000': { auth: b64('alice:s3cr:et') },
                'https://index.docker.io/v1/': { username: 'bob', password: 'pw', identitytoken: 'tok' },
              },
            }),
          ),
        },
      },
      {
        type: 'kubernetes.io/dockercfg',
        data: { '.dockercfg': b64(JSON.stringify({ 'quay.io': { auth: b64('c:d') } })) },
      },
      { type: 'Opaque', data: { '.dockerconfigjson': b64('{}') } },
      { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'not base64 json' } },
    ]);
    assert.deepEqual(auths, [
      { serverAddress: 'registry.example:5000', username: 'alice', password: 's3cr:et' },
      { serverAddress: 'https://index.docker.io/v1/', username: 'bob', password: 'pw', identityToken: 'tok' },
      { serverAddress: 'quay.io', username: 'c', password: 'd' },
    ]);
  });
});
