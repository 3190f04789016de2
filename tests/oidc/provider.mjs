// A real OpenID provider (panva's oidc-provider) for the tests of `fluxfleet mcp --listen` as an
// OAuth resource server. It issues JWT access tokens by the client_credentials grant, one
// audience per token (RFC 8707 resource indicators), signed RS256 with the first key of KEYS.
//
// Environment:
//   PORT         the loopback port to listen on; 0 (the default) takes a free one
//   ISSUER       the issuer; default http://127.0.0.1:<port>
//   KEYS         a JSON file holding a JWKS of private signing keys; when it does not exist, one
//                RSA 2048 key is made and written there (delete the file to rotate the key)
//   RESOURCE     the resource a token is for when the client names none (e.g. https://mcp.test/mcp);
//                any other resource a client asks for is granted too
//   TTL_SECONDS  how long access tokens live (default 600)
//
// Prints `ready <issuer>` on stdout once listening, and nothing else.
//
// Clients, all client_credentials only, the secret being the client id followed by "-secret"
// (registered for client_secret_basic; the provider takes client_secret_post from them too):
//   alice (groups ["dev-team"]), bob (groups ["viewers"]), assistant-1 … assistant-20
//   (groups ["assistants"]).

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';

// The provider warns about its quick-start defaults (in-memory storage) and about Node 20 not
// being its supported LTS; both are about running it in production, which this never is. Any
// other warning still shows.
const warn = console.warn;
console.warn = (...args) => {
  const text = String(args[0]);
  if (/in-memory adapter|Unsupported runtime/.test(text)) return;
  warn(...args);
};
const { default: Provider } = await import('oidc-provider');

const SCOPES = ['fluxfleet:read', 'fluxfleet:propose', 'fluxfleet:write'];

const env = (name, fallback) => {
  const value = process.env[name];
  if (value === undefined || value === '') {
    if (fallback === undefined) throw new Error(`${name} must be set`);
    return fallback;
  }
  return value;
};

const keysFile = env('KEYS');
const resource = env('RESOURCE');
const ttl = Number(env('TTL_SECONDS', '600'));
if (!Number.isInteger(ttl) || ttl < 1) throw new Error(`TTL_SECONDS must be a whole number of seconds, not ${ttl}`);

// The signing keys: read, or made once and written so that a restart keeps them.
if (!fs.existsSync(keysFile)) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  const kid = crypto.randomBytes(8).toString('hex');
  fs.writeFileSync(keysFile, JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] }));
}
const jwks = JSON.parse(fs.readFileSync(keysFile, 'utf8'));

const groups = new Map([
  ['alice', ['dev-team']],
  ['bob', ['viewers']],
]);
for (let i = 1; i <= 20; i += 1) groups.set(`assistant-${i}`, ['assistants']);

const clients = [...groups.keys()].map((id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  scope: SCOPES.join(' '),
  token_endpoint_auth_method: 'client_secret_basic',
}));

// Listen first: with PORT=0 the issuer is only known once the port is.
const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(env('PORT', '0')), '127.0.0.1', resolve);
});
const issuer = env('ISSUER', `http://127.0.0.1:${server.address().port}`);

const provider = new Provider(issuer, {
  jwks,
  clients,
  scopes: SCOPES,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      // Every resource is known: a JWT access token for it, the fluxfleet scopes, and the
      // resource itself as the audience.
      getResourceServerInfo: (_ctx, resourceIndicator) => ({
        scope: SCOPES.join(' '),
        audience: resourceIndicator,
        accessTokenFormat: 'jwt',
        accessTokenTTL: ttl,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  ttl: { ClientCredentials: ttl },
  extraTokenClaims: (_ctx, token) => ({ groups: groups.get(token.clientId) ?? [] }),
});

// Server errors on stderr, for a test that fails to read why.
provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));

server.on('request', provider.callback());
process.stdout.write(`ready ${issuer}\n`);
