package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weftworks/weft/internal/ops/proc"
)

// Options say where and how to run the compose file.
type Options struct {
	Compose string // docker-compose.yml
	Weft    string // the weft binary
	Dir     string // data and logs
	// Offset moves every port (5432 becomes 5432+Offset); replicas of a service add 100 each.
	Offset int
	// Env answers ${VAR} references of the file (before the process environment).
	Env map[string]string
	// Workers overrides the worker service's replicas (0: the file's).
	Workers int
	// WorkerArgs are added to the worker service's command (tuning flags).
	WorkerArgs []string
	// ExtraEnv is added to every weft service's environment.
	ExtraEnv map[string]string
	Progress io.Writer
}

// Cluster is a running compose file.
type Cluster struct {
	o     Options
	file  *Compose
	procs []*proc.Proc
	pg    *postgres
	// Ports: service name -> its container ports moved (first replica).
	Ports map[string]map[int]int
}

func (c *Cluster) logf(format string, args ...any) {
	if c.o.Progress != nil {
		fmt.Fprintf(c.o.Progress, "cluster: "+format+"\n", args...)
	}
}

// Up starts every service in dependency order, waiting for each health check before starting
// what depends on it.
func Up(ctx context.Context, o Options) (*Cluster, error) {
	f, err := Load(o.Compose)
	if err != nil {
		return nil, err
	}
	if p := f.Problems(); len(p) > 0 {
		return nil, fmt.Errorf("%s: %s", o.Compose, strings.Join(p, "; "))
	}
	order, err := f.Order()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{o: o, file: f, Ports: map[string]map[int]int{}}
	for _, name := range order {
		if err := c.startService(ctx, name); err != nil {
			c.Down()
			return nil, fmt.Errorf("service %s: %w", name, err)
		}
	}
	return c, nil
}

// Address is host:port of a service's container port, as run here.
func (c *Cluster) Address(service string, port int) string {
	return "127.0.0.1:" + strconv.Itoa(c.Ports[service][port])
}

func (c *Cluster) replicas(name string) int {
	s := c.file.Services[name]
	if name == "worker" && c.o.Workers > 0 {
		return c.o.Workers
	}
	return max(1, s.Deploy.Replicas)
}

func (c *Cluster) startService(ctx context.Context, name string) error {
	s := c.file.Services[name]
	for r := range c.replicas(name) {
		shift := c.o.Offset + 100*r
		ports := map[int]int{}
		for _, p := range s.ContainerPorts() {
			ports[p] = p + shift
		}
		for _, a := range append(append([]string{}, s.Command...), s.Healthcheck.Test...) {
			// ports a command names that the file does not publish (a worker's metrics)
			if m := regexp.MustCompile(`:(\d{4,5})$`).FindStringSubmatch(a); m != nil {
				if p, _ := strconv.Atoi(m[1]); ports[p] == 0 {
					ports[p] = p + shift
				}
			}
		}
		if r == 0 {
			c.Ports[name] = ports
		}
		env, err := c.environment(s, ports)
		if err != nil {
			return err
		}
		label := name
		if c.replicas(name) > 1 {
			label = fmt.Sprintf("%s-%d", name, r+1)
		}
		if !s.IsWeft() {
			if c.pg, err = startPostgres(ctx, filepath.Join(c.o.Dir, label), ports[5432], env); err != nil {
				return err
			}
			c.logf("%s: PostgreSQL on 127.0.0.1:%d", label, ports[5432])
			continue
		}
		args := c.rewriteArgs(s.Command, ports)
		if name == "worker" {
			args = append(args, c.o.WorkerArgs...)
		}
		p, err := proc.Start(label, c.o.Weft, filepath.Join(c.o.Dir, label+".log"), env, args...)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		c.logf("%s: weft %s", label, strings.Join(args, " "))
		if err := c.healthy(ctx, label, s, ports, env, p); err != nil {
			return err
		}
	}
	return nil
}

// environment is the process environment of a service: this process's own minus weft's and
// Temporal's settings, then the service's variables with references resolved and addresses
// rewritten.
func (c *Cluster) environment(s Service, ports map[int]int) ([]string, error) {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "WEFT_") || strings.HasPrefix(k, "TEMPORAL_") || strings.HasPrefix(k, "MONGODB_") ||
			strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "VOYAGE_") || strings.HasPrefix(k, "POSTGRES_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "WEFT_DEV_STATE="+filepath.Join(c.o.Dir, "no-dev-state.json"))
	keys := make([]string, 0, len(s.Environment))
	for k := range s.Environment {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := c.interpolate(s.Environment[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		env = append(env, k+"="+c.rewrite(v, ports))
	}
	if s.IsWeft() {
		extra := make([]string, 0, len(c.o.ExtraEnv))
		for k, v := range c.o.ExtraEnv {
			extra = append(extra, k+"="+v)
		}
		sort.Strings(extra)
		env = append(env, extra...)
	}
	return env, nil
}

var reference = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}`)

// interpolate resolves ${VAR}, ${VAR:-default} and ${VAR:?message} as compose does.
func (c *Cluster) interpolate(v string) (string, error) {
	var problem error
	out := reference.ReplaceAllStringFunc(v, func(ref string) string {
		m := reference.FindStringSubmatch(ref)
		val, ok := c.o.Env[m[1]]
		if !ok {
			val = os.Getenv(m[1])
		}
		if val != "" {
			return val
		}
		if m[2] == "?" {
			problem = fmt.Errorf("%s: %s", m[1], m[3])
		}
		return m[3]
	})
	return out, problem
}

// rewrite turns SERVICE:PORT into 127.0.0.1:moved port, and 0.0.0.0 into 127.0.0.1.
func (c *Cluster) rewrite(v string, own map[int]int) string {
	for name := range c.file.Services {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `:(\d+)`)
		v = re.ReplaceAllStringFunc(v, func(s string) string {
			p, _ := strconv.Atoi(re.FindStringSubmatch(s)[1])
			if moved := c.Ports[name][p]; moved != 0 {
				return "127.0.0.1:" + strconv.Itoa(moved)
			}
			return s
		})
	}
	v = regexp.MustCompile(`0\.0\.0\.0:(\d+)`).ReplaceAllStringFunc(v, func(s string) string {
		p, _ := strconv.Atoi(strings.TrimPrefix(s, "0.0.0.0:"))
		if moved := own[p]; moved != 0 {
			return "127.0.0.1:" + strconv.Itoa(moved)
		}
		return "127.0.0.1:" + strconv.Itoa(p)
	})
	v = regexp.MustCompile(`127\.0\.0\.1:(\d+)`).ReplaceAllStringFunc(v, func(s string) string {
		p, _ := strconv.Atoi(strings.TrimPrefix(s, "127.0.0.1:"))
		if moved := own[p]; moved != 0 && moved != p && !c.isMoved(p) {
			return "127.0.0.1:" + strconv.Itoa(moved)
		}
		return s
	})
	if v == "0.0.0.0" {
		return "127.0.0.1"
	}
	return v
}

// isMoved reports whether p is already a moved port of some service.
func (c *Cluster) isMoved(p int) bool {
	for _, ports := range c.Ports {
		for _, m := range ports {
			if m == p {
				return true
			}
		}
	}
	return false
}

func (c *Cluster) rewriteArgs(args []string, ports map[int]int) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if p, err := strconv.Atoi(a); err == nil && ports[p] != 0 {
			out[i] = strconv.Itoa(ports[p])
			continue
		}
		out[i] = c.rewrite(a, ports)
	}
	return out
}

// healthy runs the service's health check until it passes (2 minutes at most).
func (c *Cluster) healthy(ctx context.Context, label string, s Service, ports map[int]int, env []string, p *proc.Proc) error {
	test := s.Healthcheck.Test
	if len(test) < 2 || test[0] != "CMD" || test[1] != "weft" {
		return fmt.Errorf("healthcheck %q: the cluster runs [\"CMD\", \"weft\", ...] checks only", test)
	}
	args := c.rewriteArgs(test[2:], ports)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cmd := exec.CommandContext(ctx, c.o.Weft, args...)
		cmd.Env = env
		if err := cmd.Run(); err == nil {
			return nil
		}
		if !p.Alive() {
			return fmt.Errorf("%s exited: see %s", label, filepath.Join(c.o.Dir, label+".log"))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not become healthy in 2 minutes (weft %s): see %s", label, strings.Join(args, " "), filepath.Join(c.o.Dir, label+".log"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// Down stops the weft processes (SIGTERM, then SIGKILL) in reverse order, then PostgreSQL.
func (c *Cluster) Down() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(syscall.SIGTERM, 15*time.Second)
	}
	c.procs = nil
	if c.pg != nil {
		c.pg.stop()
		c.pg = nil
	}
}

var errNoPostgres = errors.New("PostgreSQL's server programs are not installed: apt-get install postgresql")
