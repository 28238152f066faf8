// Package vaipkgtest builds vai workflow packages for tests, in vai's documented layout: a
// package.json with a "vai" field plus workflow.json and README.md, as a directory, as an npm
// tarball (archive/tar + gzip, entries under package/) and served by a fake npm registry.
package vaipkgtest
