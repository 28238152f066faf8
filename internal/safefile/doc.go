// Package safefile reads files whose size and kind weft does not control (workflow files, fixtures,
// input files, key files, the workflows directory) without trusting them: a file is checked before
// a byte of it is read, so /dev/zero, a named pipe, a directory or a 2 GB file is refused at once
// with a message naming the file, what it is, the limit and what to do.
//
// Entry points: Read and ReadHint (a whole file up to a limit), Open (a regular file, opened
// without blocking on a pipe); Error, ErrNotRegular and ErrTooLarge say what was refused; Kind,
// Size and Limit word the messages. WriteAtomic writes a file of a folder whole (a temporary file
// renamed over it) under a name CheckName has checked to be plain, so it cannot land outside the
// folder; ErrBadName is what CheckName refuses.
//
// It is a leaf: it must not import any weft package or Temporal, so the language (workflows/dsl),
// auth, codec, client and the CLI can all use it.
package safefile
