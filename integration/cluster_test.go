package integration

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/ops/cluster"
	"github.com/weftworks/weft/starter"
)

// TestComposeFile: docker-compose.yml, which docker cannot check here, stays a valid production
// description that the cluster can run: images pinned, health checks everywhere, dependencies
// that exist, each weft service's command a real weft command with real flags, and every
// variable it sets one that weft reads.
func TestComposeFile(t *testing.T) {
	f, err := cluster.Load("../docker-compose.yml")
	require.NoError(t, err)
	require.Empty(t, f.Problems())
	src := goSources(t)
	names := make([]string, 0, len(f.Services))
	for n := range f.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := f.Services[n]
		if !s.IsWeft() {
			continue
		}
		t.Run(n, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := starter.Execute(append(append([]string{}, s.Command...), "--help"), strings.NewReader(""), &out, &errOut)
			require.Equal(t, 0, code, "weft %s: %s", strings.Join(s.Command, " "), errOut.String())
			for _, h := range s.Healthcheck.Test[2:] {
				if strings.HasPrefix(h, "--") {
					require.Contains(t, pingHelp(t), h, "healthcheck flag")
				}
			}
			for k := range s.Environment {
				require.Contains(t, src, `"`+k+`"`, "%s sets %s, which no weft code reads", n, k)
			}
		})
	}
	require.Equal(t, 2, f.Services["worker"].Deploy.Replicas)
}

func pingHelp(t *testing.T) string {
	var out bytes.Buffer
	require.Equal(t, 0, starter.Execute([]string{"ping", "--help"}, strings.NewReader(""), &out, &out))
	return out.String()
}

// goSources is the repository's non-test Go code, where the settings weft reads are named.
func goSources(t *testing.T) string {
	var b strings.Builder
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	require.NoError(t, err)
	return b.String()
}

// TestCluster runs docker-compose.yml as processes (make cluster): PostgreSQL, Temporal on it,
// FerretDB on it, 2 workers, the gateway and the console; the demo runs end to end and both
// workers take part.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the cluster starts PostgreSQL and seven weft processes")
	}
	bin := buildWeft(t)
	// PostgreSQL runs as its own account, which cannot enter t.TempDir()'s private folders.
	dir, err := os.MkdirTemp("", "weft-cluster-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var progress bytes.Buffer
	c, err := cluster.Up(context.Background(), cluster.Options{Compose: "../docker-compose.yml", Weft: bin, Dir: dir,
		Offset: freeOffset(t), Env: map[string]string{"WEFT_MCP_KEY": "cluster-test-key"}, Progress: &progress})
	require.NoError(t, err, progress.String())
	defer c.Down()
	var demo bytes.Buffer
	res, err := cluster.Demo(context.Background(), c.Address("temporal", 7233), &demo)
	require.NoError(t, err, demo.String())
	t.Log("\n" + demo.String())
	require.Len(t, res.Runs, 4)
	require.Len(t, res.Workers, 2, "both worker processes ran tasks")
	require.Regexp(t, regexp.MustCompile(`multi-collection-search: [1-9]\d* results`), demo.String())
}

// freeOffset finds a port offset at which the compose file's ports are free here.
func freeOffset(t *testing.T) int {
	f, err := cluster.Load("../docker-compose.yml")
	require.NoError(t, err)
	for offset := 21000; offset <= 30000; offset += 1000 {
		free := true
		for _, s := range f.Services {
			for _, p := range append(s.ContainerPorts(), 9464) {
				for r := range 4 {
					if !portFree(p + offset + 100*r) {
						free = false
					}
				}
			}
		}
		if free {
			return offset
		}
	}
	t.Fatal("no free port offset")
	return 0
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
