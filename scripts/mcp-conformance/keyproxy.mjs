// keyproxy.mjs UPSTREAM_PORT: a loopback-only forwarder that gives the conformance suite's client
// its bearer key. The suite (0.1.16) cannot send headers in server mode, and weft mcp over HTTP
// refuses every request without a key, so the suite talks to this proxy, which listens on
// 127.0.0.1 only and forwards each request to weft mcp on 127.0.0.1:UPSTREAM_PORT with
// `Authorization: Bearer $WEFT_MCP_KEY` added.
//
// Auth stays intact: the key is the client's credential, held by the client side (this process,
// started by run.sh for the suite), exactly as an MCP client holding a key would send it. weft mcp
// is unchanged and still checks the key, the Host (DNS rebinding) and everything else on every
// request; nothing in weft knows about this proxy or has a mode that skips a check.
//
// Host and Origin go through as the suite sent them (the dns-rebinding-protection scenario sends
// a foreign Host and Origin and expects weft to refuse them), and answers stream through
// unbuffered (SSE: a tool's progress and logging notifications, the GET stream).
// It prints the port it listens on, on one line, then serves until killed.
import http from "node:http";

const upstreamPort = Number(process.argv[2]);
const key = process.env.WEFT_MCP_KEY;
if (!upstreamPort || !key) {
  console.error("usage: WEFT_MCP_KEY=... node keyproxy.mjs UPSTREAM_PORT");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${key}` };
  const up = http.request(
    { host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers },
    (upRes) => {
      res.writeHead(upRes.statusCode, upRes.statusMessage, upRes.headers);
      res.flushHeaders();
      upRes.on("data", (chunk) => res.write(chunk));
      upRes.on("end", () => res.end());
      upRes.on("error", () => res.destroy());
    },
  );
  up.on("error", (err) => {
    if (res.headersSent) return res.destroy();
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`keyproxy: weft mcp did not answer: ${err.message}\n`);
  });
  // The client going away (a closed SSE stream) ends the upstream request too.
  res.on("close", () => up.destroy());
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
