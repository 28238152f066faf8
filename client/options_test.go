package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Dial(Options{}) reads the environment the README promises, then a running weft dev's
// announcement (as the CLI does), and given values win over both.
func TestOptionsFillReadsEnvironment(t *testing.T) {
	running := &DevState{PID: os.Getpid(), Temporal: "127.0.0.1:17233", Namespace: "dev-ns"}
	gone := &DevState{PID: 1 << 30, Temporal: "127.0.0.1:17233", Namespace: "dev-ns"}
	cases := []struct {
		name         string
		env          map[string]string
		dev          *DevState
		given        Options
		addr, ns, tq string
	}{
		{name: "defaults", env: map[string]string{EnvAddress: "", EnvNamespace: "", EnvTaskQueue: ""},
			addr: DefaultAddress, ns: "default", tq: "weft"},
		{name: "environment", env: map[string]string{EnvAddress: "10.0.0.1:7233", EnvNamespace: "prod", EnvTaskQueue: "q2"},
			addr: "10.0.0.1:7233", ns: "prod", tq: "q2"},
		{name: "given wins", env: map[string]string{EnvAddress: "10.0.0.1:7233", EnvNamespace: "prod", EnvTaskQueue: "q2"},
			given: Options{Address: "h:1", Namespace: "n", TaskQueue: "t"}, addr: "h:1", ns: "n", tq: "t"},
		{name: "a running weft dev", env: map[string]string{EnvAddress: "", EnvNamespace: "", EnvTaskQueue: ""}, dev: running,
			addr: "127.0.0.1:17233", ns: "dev-ns", tq: "weft"},
		{name: "the environment before weft dev", env: map[string]string{EnvAddress: "10.0.0.1:7233", EnvNamespace: "", EnvTaskQueue: ""}, dev: running,
			addr: "10.0.0.1:7233", ns: "dev-ns", tq: "weft"},
		{name: "a weft dev that is gone", env: map[string]string{EnvAddress: "", EnvNamespace: "", EnvTaskQueue: ""}, dev: gone,
			addr: DefaultAddress, ns: "default", tq: "weft"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			t.Setenv(EnvDevState, filepath.Join(t.TempDir(), "dev.json"))
			if c.dev != nil {
				require.NoError(t, WriteDevState(*c.dev))
			}
			o := c.given
			o.fill()
			require.Equal(t, c.addr, o.Address)
			require.Equal(t, c.ns, o.Namespace)
			require.Equal(t, c.tq, o.TaskQueue)
		})
	}
}
