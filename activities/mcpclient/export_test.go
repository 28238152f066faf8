package mcpclient

import "time"

// SetClock replaces the pool's clock (tests of idle connections).
func SetClock(p *Sessions, now func() time.Time) { p.now = now }
