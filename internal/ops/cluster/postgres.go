package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// postgres is a throwaway PostgreSQL server from Debian's package, configured like the official
// image: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB from the service's environment.
type postgres struct {
	bin, data, sock string
	asUser          string // run the server programs as this user (initdb refuses root)
}

func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errNoPostgres
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func (p *postgres) run(ctx context.Context, name string, args ...string) error {
	path := filepath.Join(p.bin, name)
	var cmd *exec.Cmd
	if p.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", p.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func startPostgres(ctx context.Context, dir string, port int, env []string) (*postgres, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	p := &postgres{bin: bin, data: filepath.Join(dir, "data"), sock: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, PostgreSQL needs its own account: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		p.asUser = "postgres"
		if exec.CommandContext(ctx, "runuser", "-u", "postgres", "--", "test", "-w", dir).Run() != nil {
			return nil, fmt.Errorf("the postgres account cannot reach %s (a parent folder is private): choose a data folder under one it can traverse, such as /tmp or the project", dir)
		}
	}
	pgUser := envValue(env, "POSTGRES_USER")
	if pgUser == "" {
		pgUser = "postgres"
	}
	if _, err := os.Stat(filepath.Join(p.data, "PG_VERSION")); err != nil {
		// trust on 127.0.0.1: a throwaway server for this machine only
		if err := p.run(ctx, "initdb", "-D", p.data, "-U", pgUser, "--auth=trust", "-E", "UTF8"); err != nil {
			return nil, err
		}
	}
	if err := p.run(ctx, "pg_ctl", "-D", p.data, "-w", "-t", "60", "-l", filepath.Join(dir, "postgres.log"),
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off", port, dir), "start"); err != nil {
		return nil, err
	}
	if db := envValue(env, "POSTGRES_DB"); db != "" && db != pgUser {
		err := p.run(ctx, "createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pgUser, db)
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			p.stop()
			return nil, err
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.run(ctx, "pg_isready", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pgUser) != nil {
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("PostgreSQL on port %d did not become ready: see %s", port, filepath.Join(dir, "postgres.log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return p, nil
}

func (p *postgres) stop() {
	_ = p.run(context.Background(), "pg_ctl", "-D", p.data, "-m", "fast", "-w", "stop")
}
