package starter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// The embedded stack — Temporal's server, its Web UI and FerretDB — is most of what weft links:
// initialising those packages alone takes longer than `weft validate` should. So it lives in a
// second binary, weft-stack (cmd/weft-stack), which is this same CLI plus the stack. In the weft
// binary the stack is nil, and `weft dev`, `weft server` and `weft store` check their flags and
// then hand the command line to weft-stack with exec: same process id, signals and terminal, so
// nothing that runs or stops them can tell.

// StackProvider starts the embedded servers. weft-stack's main provides one.
type StackProvider struct {
	// Temporal starts the Temporal server (SQLite in DataDir, or PostgreSQL) and its Web UI.
	Temporal func(ctx context.Context, o TemporalOptions) (*RunningTemporal, error)
	// Store starts FerretDB on SQLite in dir; StorePostgres on PostgreSQL.
	Store         func(ctx context.Context, dir string, port int) (*RunningStore, error)
	StorePostgres func(ctx context.Context, postgres, host string, port int) (*RunningStore, error)
}

// TemporalOptions are the embedded server's settings (devserver.Options).
type TemporalOptions struct {
	DataDir, Host                               string
	Port, UIPort                                int
	Namespace, LogFile, CodecEndpoint, Postgres string
	HistoryShards                               int32
}

// RunningTemporal is a started server.
type RunningTemporal struct {
	Address, UIAddress, Namespace string
	Stop                          func()
}

// RunningStore is a started MongoDB-wire database.
type RunningStore struct {
	URI  string
	Stop func()
}

var stack *StackProvider

// ProvideStack makes this binary run the stack itself (weft-stack's main calls it).
func ProvideStack(p StackProvider) { stack = &p }

// StackBinary is the name of the binary that holds the embedded stack.
const StackBinary = "weft-stack"

// stackContext is where dev, server and store start: in weft it hands the command line over to
// weft-stack and does not return unless that fails; in weft-stack it returns the context the
// stack runs in, done on Ctrl-C or SIGTERM.
func stackContext(cmd *cobra.Command) (context.Context, context.CancelFunc, error) {
	if stack == nil {
		return nil, nil, handOverToStack(cmd)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return ctx, stop, nil
}

// handOverToStack replaces this process with weft-stack running the same command line. It
// returns only when that is not possible.
func handOverToStack(cmd *cobra.Command) error {
	path, err := findStack()
	if err != nil {
		return err
	}
	// The command line stays as typed (ps shows `weft dev ...`); /proc/PID/exe is weft-stack.
	if err := syscall.Exec(path, os.Args, os.Environ()); err != nil {
		return fmt.Errorf("%s: starting %s: %w", cmd.CommandPath(), path, err)
	}
	return nil
}

// findStack looks for weft-stack next to this executable, then on PATH.
func findStack() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), StackBinary)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(StackBinary); err == nil {
		return p, nil
	}
	return "", &ExitError{Code: ExitFailed, Err: errors.New("the embedded Temporal server and database are in the " + StackBinary +
		" binary, which is neither next to weft nor on PATH: `make build` builds both into bin/, or run" +
		" `go install github.com/weftworks/weft/cmd/weft-stack@" + stackVersion(CurrentBuild().Version) + "` (or use an existing Temporal with --address)")}
}

// stackVersion is the version of weft-stack to install beside a weft of version v: the same
// one when v is a module version (go install of a tag, a pseudo-version), else latest.
func stackVersion(v string) string {
	if strings.HasPrefix(v, "v") && !strings.HasSuffix(v, "+dirty") {
		return v
	}
	return "latest"
}
