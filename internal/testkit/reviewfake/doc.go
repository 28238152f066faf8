// Package reviewfake is a Temporal client for tests of the review listings (client, the CLI,
// the MCP gateway): runs that each wait on one review, listed as visibility lists them. It
// stands in for a server only where one would have to hold hundreds of waiting runs, or where a
// test crosses the read and act rules with every surface's lookup of a run (its start request,
// its description, its cancellation; an id it does not hold is not found, as Temporal says).
package reviewfake
