#!/usr/bin/env bash
# Cross-language MCP smoke: the TypeScript SDK and the MCP Inspector CLI against bin/weft mcp.
# Run from the repository root after `make build mcp-client` (make mcp-smoke does all three).
set -euo pipefail
root=$(pwd)
bin="$root/bin/weft"
cd "$root/scripts/mcp-smoke"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export WEFT_MCP_KEY="smoke-$(date +%s%N)"
"$bin" mcp --transport http --port "$port" --address 127.0.0.1:1 --key-file "$(mktemp -d)/keys.json" 2>/dev/null &
gw=$!
trap 'kill $gw 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
node smoke.mjs "$bin" "http://127.0.0.1:$port/mcp" "$WEFT_MCP_KEY"
inspector="node_modules/.bin/mcp-inspector"
# read the whole answer before looking in it: grep -q stops reading at its first match, and the
# Inspector, still writing a list larger than a pipe holds, would fail with EPIPE
tools=$("$inspector" --cli "$bin" mcp --address 127.0.0.1:1 --method tools/list)
grep -q '"weft_query"' <<<"$tools"
# every tool the Inspector lists declares its output, and no schema holds a type list (issue 44 item 7)
node --input-type=module -e '
  const tools = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => ok(s)); })).tools;
  const lists = [];
  const walk = (v, p) => { if (Array.isArray(v)) v.forEach((x, i) => walk(x, p + "/" + i)); else if (v && typeof v === "object") { if (Array.isArray(v.type)) lists.push(p); for (const [k, x] of Object.entries(v)) walk(x, p + "/" + k); } };
  tools.forEach((t) => walk({ input: t.inputSchema, output: t.outputSchema }, t.name));
  const bare = tools.filter((t) => !t.outputSchema).map((t) => t.name);
  if (bare.length || lists.length) { console.error(`FAIL inspector stdio: ${tools.length} tools, without outputSchema: ${bare}; type lists at: ${lists}`); process.exit(1); }
  console.log(`ok   inspector stdio: tools/list (${tools.length} tools, each with an outputSchema, no type lists)`);
' <<<"$tools"
"$inspector" --cli "$bin" mcp --address 127.0.0.1:1 --method tools/call --tool-name weft_models --tool-arg category=embedding | grep -q 'local-glove-sif-100d'
echo "ok   inspector stdio: tools/call weft_models"
# Inspector 0.15.0 (the last for Node 20) cannot send headers, so over HTTP it checks the 401 path:
# the gateway must refuse it with the JSON error that says how to authenticate.
if out=$("$inspector" --cli "http://127.0.0.1:$port/mcp" --transport http --method tools/list 2>&1); then
  echo "FAIL inspector http: a call without a key was accepted"; exit 1
fi
echo "$out" | grep -q '"error":"unauthorized"' || { echo "FAIL inspector http: unexpected answer: $out"; exit 1; }
echo "ok   inspector http: call without a key refused with 401"
# OAuth: the gateway with an issuer and no key, through the SDK's discovery and with a token
node oauth.mjs "$bin" 2>/dev/null
