// Package wirejson writes weft's wire messages (proto/weft/v1) as JSON in the one encoding every
// surface shows: the proto JSON mapping with 64-bit integers as numbers (wirejson.go).
// weftclient.ProtoJSON is its name for the surfaces (the CLI, the HTTP API, MCP, the console);
// the events package, below the client, writes its events' proto parts with it too. Its test is
// the client's TestProtoJSONWritesInt64sAsNumbers.
//
// It is a leaf: it imports no weft package and no Temporal.
package wirejson
