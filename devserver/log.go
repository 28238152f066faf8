package devserver

import (
	"log/slog"

	tlog "go.temporal.io/sdk/log"
)

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
