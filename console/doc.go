// Package console serves the weft console (`weft console`, and `weft dev` unless --console off):
// the runs, each run drawn as the workflow its author wrote (live), the pending reviews with their
// decisions, a playground of the workflows (built-ins and the workflows directory), and the reports
// `weft eval` keeps (Options.EvalsDir, read only: eval/report; weft eval is their one writer).
//
// Entry points: New (Options: the client, keys and login, allowed hosts) and Server.Handler;
// NewGraph turns a definition into the nodes and edges a run page draws.
//
// Everything it reads and does goes through the client package, the one the CLI and the MCP gateway
// use, and its page acts through the HTTP API (package httpapi), which the console serves at /v1/
// with the login session as the identity (v1.go; the /api/ routes left are what /v1 does not
// serve, docs/console.md says why): it must not talk to Temporal on its own, run workflow code or tools, or read provider
// credentials. Logins are auth's bearer keys, and state-changing requests carry a CSRF token. Pages
// are html/template (every value escaped) and hand-written scripts that build the DOM with
// textContent only, so no workflow data is ever executed as HTML. The builder (/build) draws its
// canvas with Drawflow, vendored pinned under static/vendor/drawflow with its licence and
// checksums (TestVendoredDrawflowMatchesItsChecksums); its palette and forms come from the tool
// registry (Tools, handed to the page); an export patches the imported text with jsonc-parser 3.3.1 (Microsoft's,
// its lib/esm bundled as one file, vendored pinned under static/vendor/jsonc-parser with its
// licence and checksums: TestBuilderVendoredJsoncParserMatchesItsChecksums), so the file keeps its
// formatting and key order. Text edited in the page is started as a client-origin definition
// (POST /v1/runs with the definition). There is no Node toolchain: the assets are embedded in the binary.
package console
