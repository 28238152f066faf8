package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Proc is a running process.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs bin with args and env (the whole environment), appending its output to logPath.
func Start(name, bin, logPath string, env []string, args ...string) (*Proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

// Stop sends sig and waits for the process to end, killing it after grace.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Alive reports whether the process is still running.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}
