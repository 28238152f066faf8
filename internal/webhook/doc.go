// Package webhook holds what the worker's notifications share between the workflow that decides
// to send one and the activity that delivers it: the event names, the operator's declarations
// (WEFT_WEBHOOKS), a workflow file's "notify" entries, the payloads (JSON, or Slack's
// {"text": ...}) and their HMAC-SHA256 signature. It has no Temporal dependency.
package webhook
