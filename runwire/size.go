package runwire

import "fmt"

// MaxValueBytes is the largest value (JSON or protobuf bytes) weft puts into one payload of a
// run's history, well under Temporal's 2 MB so that the rest of the task's payloads (headers,
// the step's other inputs, encoding) fit beside it. The interpreter's size gate holds values to
// it (workflows/sizegate.go); the client refuses start requests over it.
const MaxValueBytes = 3 << 19 // 1.5 MB

// ByteSize says n bytes the way weft's messages do: "1.5 MB", "64 KB", "12 bytes".
func ByteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
