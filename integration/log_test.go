package integration

import (
	"io"
	"log/slog"

	tlog "go.temporal.io/sdk/log"
)

func quiet() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
