// Package codec protects what weft puts into Temporal's history: with keys configured every payload
// is encrypted with AES-256-GCM under a key id, so keys can rotate (old ids still decrypt), and
// payloads above a size are compressed with zstd (by default only when encrypting, so a plain
// payload stays readable by every Temporal tool). Payloads written before a codec was configured
// pass through unchanged, so existing runs keep reading.
//
// Entry points: FromEnv (WEFT_CODEC_KEYS or WEFT_CODEC_KEY_FILE, WEFT_CODEC_COMPRESS_ABOVE), then
// Codecs (the converter.PayloadCodec chain) or DataConverter. Every weft process that talks to
// Temporal uses the same codecs: starter passes DataConverter to client.Dial for every command
// (weft run, worker, mcp, dev, ...); `weft codec-server` (starter/codecserver.go) and `weft dev`,
// when keys are set, serve Codecs to the Temporal UI and CLI.
//
// It knows payloads only: it must not import client/, workflows/ or activities/, and it reads
// environment variables only through the getenv FromEnv is given.
package codec
