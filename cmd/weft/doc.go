// Command weft is the weft CLI: see package starter, which holds every command.
//
// It is a main and holds no logic: it calls starter.Main. It links neither the Temporal server nor
// FerretDB; the commands that need them (dev, server, store) hand themselves over to weft-stack.
package main
