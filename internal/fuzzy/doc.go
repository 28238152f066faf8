// Package fuzzy finds what a person probably meant: the one edit distance weft's did-you-mean
// hints use (file fields, tool names, step ids, fixture keys, run ids).
package fuzzy
