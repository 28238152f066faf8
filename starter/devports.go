package starter

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// devPort is one address weft dev listens on, with the setting that moves it.
type devPort struct {
	what string // "Temporal", "Web UI", ...
	addr string // host:port
	flag string // the weft dev flag
	make string // the make run variable that sets the flag
}

// busyPortsError lists every port weft dev needs that something else holds.
type busyPortsError struct{ busy []devPort }

func (e *busyPortsError) Error() string {
	var b strings.Builder
	b.WriteString("weft dev cannot start: ")
	if len(e.busy) == 1 {
		b.WriteString("a port it needs is in use")
	} else {
		fmt.Fprintf(&b, "%d ports it needs are in use", len(e.busy))
	}
	b.WriteString(" (another weft dev, or another program, listens there):")
	for _, p := range e.busy {
		fmt.Fprintf(&b, "\n  %s %s: choose another with %s (make run %s=...)", p.what, p.addr, p.flag, p.make)
	}
	b.WriteString("\n  a running weft dev answers `weft dev --env`; `ss -ltnp` names what holds a port")
	return b.String()
}

// devPorts are the fixed addresses weft dev is about to listen on (Temporal's other services
// take free ports of their own): the frontend, the Web UI unless --ui-port 0, the embedded
// database unless MONGODB_URI is set, the codec server when payloads are encrypted, the console
// unless "off", the metrics when asked for.
func devPorts(host string, port, uiPort, dbPort, codecPort int, embeddedDB, codec bool, console, metrics string) []devPort {
	at := func(p int) string { return net.JoinHostPort(host, strconv.Itoa(p)) }
	ps := []devPort{{"Temporal", at(port), "--port", "PORT"}}
	if uiPort > 0 {
		ps = append(ps, devPort{"Web UI", at(uiPort), "--ui-port", "UI_PORT"})
	}
	if embeddedDB {
		ps = append(ps, devPort{"database", at(dbPort), "--db-port", "DB_PORT"})
	}
	if codec {
		ps = append(ps, devPort{"codec server", at(codecPort), "--codec-port", "CODEC_PORT"})
	}
	if console != "" && console != "off" {
		ps = append(ps, devPort{"console", console, "--console", "CONSOLE"})
	}
	if metrics != "" {
		ps = append(ps, devPort{"metrics", metrics, "--metrics", "METRICS"})
	}
	return ps
}

// checkPorts says, before anything starts, which of ps something already listens on: all of
// them in one error, each with the flag that moves it. Port 0 (pick a free one) is never busy.
func checkPorts(ps []devPort) error {
	seen := map[string]devPort{}
	for _, p := range ps {
		if _, port, err := net.SplitHostPort(p.addr); err == nil && port == "0" {
			continue
		}
		if q, dup := seen[p.addr]; dup {
			return invalid(fmt.Errorf("weft dev: the %s (%s) and the %s (%s) are both set to %s: give one another port (make run %s=... or %s=...)",
				q.what, q.flag, p.what, p.flag, p.addr, q.make, p.make))
		}
		seen[p.addr] = p
	}
	var busy []devPort
	for _, p := range ps {
		l, err := net.Listen("tcp", p.addr)
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				busy = append(busy, p)
				continue
			}
			return invalid(fmt.Errorf("weft dev: %s address %s: %w (%s)", p.what, p.addr, err, p.flag))
		}
		_ = l.Close()
	}
	if len(busy) > 0 {
		return &ExitError{Code: ExitFailed, Err: &busyPortsError{busy: busy}}
	}
	return nil
}
