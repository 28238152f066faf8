// Package fakeembed is an OpenAI-compatible embeddings endpoint for tests and benchmarks, served
// over real HTTP. It behaves like the real API where weft depends on it: a request carries one
// input or a list, the answer lists one embedding per input with its index, usage counts prompt
// tokens, "dimensions" shortens the vectors, "encoding_format": "base64" sends each vector as the
// base64 of its little-endian float32s, and a request with an input longer than the
// model's context is refused as a whole with a 400 context_length_exceeded. It counts requests
// and inputs, answers after a set latency, and can fail requests with a 500.
package fakeembed
