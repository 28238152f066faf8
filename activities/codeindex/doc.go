// Package codeindex reads a source tree for the code tools: a walk that honours .gitignore
// files, language detection by file name, and chunks split at function and class boundaries
// with their line numbers and symbols (a line or character window where a language has no
// boundaries or a definition is too long).
package codeindex
