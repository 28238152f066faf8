package runwire

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// ErrorText is the message people need from a Temporal error: the application error's message
// without the wrappers (activity error, workflow execution error) and their type suffixes.
func ErrorText(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return "cancelled"
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return "timed out (" + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(te.TimeoutType().String(), "TIMEOUT_TYPE_")), "_", " ") + ")"
	}
	return err.Error()
}
