// OAuth smoke: weft mcp configured with an issuer (a JWKS served here, an RSA key generated for
// it) and no static key, driven by the TypeScript MCP SDK: the 401's WWW-Authenticate names the
// protected-resource metadata (the SDK's extractResourceMetadataUrl), the SDK's discovery reads
// it (discoverOAuthProtectedResourceMetadata), and a client with a token from the issuer lists
// and calls tools; an expired token is refused.
// Usage: node oauth.mjs /path/to/weft (run.sh runs it)
import { generateKeyPairSync, createSign } from 'node:crypto';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata, extractResourceMetadataUrl } from '@modelcontextprotocol/sdk/client/auth.js';

const weft = process.argv[2];
const fail = (msg) => { console.error('FAIL: ' + msg); process.exitCode = 1; };
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
const jwks = http.createServer((_, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ keys: [jwk] })); });
await new Promise((r) => jwks.listen(0, '127.0.0.1', r));
const port = await new Promise((r) => { const s = http.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
const base = `http://127.0.0.1:${port}`;
const issuer = 'https://login.example.com/';
const audience = `${base}/mcp`;
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const token = (sub, over = {}) => {
  const now = Math.floor(Date.now() / 1000);
  const data = b64({ alg: 'RS256', typ: 'JWT', kid: 'k1' }) + '.' + b64({ iss: issuer, aud: audience, sub, scope: 'openid weft:runner', exp: now + 600, iat: now, ...over });
  return data + '.' + createSign('RSA-SHA256').update(data).sign(privateKey).toString('base64url');
};

const gw = spawn(weft, ['mcp', '--transport', 'http', '--port', String(port)], {
  env: { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'weft-oauth-')), WEFT_MCP_KEY: '', TEMPORAL_ADDRESS: '127.0.0.1:1',
    WEFT_OAUTH_ISSUER: issuer, WEFT_OAUTH_AUDIENCE: audience, WEFT_OAUTH_JWKS_URL: `http://127.0.0.1:${jwks.address().port}/jwks` },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  for (let i = 0; ; i++) {
    try { await fetch(`${base}/health`); break; } catch (e) { if (i > 200) throw e; await new Promise((r) => setTimeout(r, 50)); }
  }
  const bare = await fetch(audience, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  const metaURL = extractResourceMetadataUrl(bare);
  console.log(`no token: ${bare.status}, WWW-Authenticate names ${metaURL}`);
  if (bare.status !== 401 || String(metaURL) !== `${base}/.well-known/oauth-protected-resource/mcp`) fail('the 401 does not name the metadata');
  const meta = await discoverOAuthProtectedResourceMetadata(new URL(audience));
  console.log(`SDK discovery: resource ${meta.resource}, authorization_servers ${meta.authorization_servers}, scopes ${meta.scopes_supported}`);
  if (meta.resource !== audience || meta.authorization_servers[0] !== issuer) fail('metadata');

  const client = new Client({ name: 'oauth-smoke', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(audience), { requestInit: { headers: { Authorization: `Bearer ${token('ana@example.com')}` } } });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: 'weft_explain', arguments: { topic: 'durability' } });
  console.log(`token: session ${transport.sessionId ? 'opened' : 'none'}, ${tools.length} tools listed (runner), weft_explain isError=${!!res.isError}`);
  if (!transport.sessionId || tools.length === 0 || res.isError) fail('a client with a token');
  await client.close();

  const expired = new Client({ name: 'oauth-smoke-expired', version: '1' });
  try {
    await expired.connect(new StreamableHTTPClientTransport(new URL(audience), { requestInit: { headers: { Authorization: `Bearer ${token('ana@example.com', { exp: Math.floor(Date.now() / 1000) - 3600 })}` } } }));
    fail('an expired token was taken');
  } catch (e) {
    console.log(`expired token: refused (${String(e.message).slice(0, 80)})`);
  }
} finally {
  gw.kill();
  jwks.close();
}
console.log(process.exitCode ? 'oauth smoke FAILED' : 'oauth smoke ok');
