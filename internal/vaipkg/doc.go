// Package vaipkg reads vai's workflow packages and keeps the installed ones: npm packages named
// vai-workflow-* or under the @vaicli/ scope (tier official for @vaicli/*, community otherwise),
// each a package.json (name, version, description, author, license, keywords, and a "vai" field:
// workflowVersion, category, tags, minVaiVersion, tools, recorded as written, and what weft cannot
// honour of them a warning: Manifest.Compatibility) plus the workflow file
// (workflow.json, or the file package.json's "main" names) and an optional README.md.
//
// Install takes a package from the npm registry (NAME[@VERSION|@TAG|@RANGE]: the packument, the
// version picked as npm picks it, its dist.tarball, checked against dist.integrity or dist.shasum), from a local directory or from a
// local .tgz, reads it in Go (archive/tar, compress/gzip) and never runs anything: no npm, no
// package scripts. A tarball is npm's (entries under one top folder, package/) or packed from
// inside the package directory (./package.json); a leading ./ is accepted. An entry that is a link,
// a device, outside the package, or over the size limits is refused. The workflow is compiled with
// workflows/dsl (what `weft validate` does) before anything is moved into the store, so an invalid
// package leaves nothing behind; Check's warnings and notes on it are returned, not refused. The
// store is a directory: DIR/NAME/VERSION (DIR/@scope/name/VERSION), one version per package.
//
// package.json's text (description, author, keywords, the vai field, ...) is the package author's
// and weft prints it: ParseManifest (and Get, for older records) drops terminal escape sequences,
// C0/C1 controls and bidi controls from it (Line, Paragraphs).
//
// Check runs vai's `check` on any workflow file: write tools with no review step before them,
// http steps aimed at literal private addresses (classified by internal/netaddr, the http tool's
// own guard), unknown tools, missing descriptions; on the tools an agent may call, writing tools
// whose calls do not wait for approval and tools weft does not have.
//
// It must not import Temporal, activities (the tool handlers) or the CLI; starter/ wires it.
package vaipkg
