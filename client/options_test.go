package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Dial(Options{}) reads the environment the README promises, and given values win over it.
func TestOptionsFillReadsEnvironment(t *testing.T) {
	cases := []struct {
		name         string
		env          map[string]string
		given        Options
		addr, ns, tq string
	}{
		{name: "defaults", env: map[string]string{EnvAddress: "", EnvNamespace: "", EnvTaskQueue: ""},
			addr: DefaultAddress, ns: "default", tq: "weft"},
		{name: "environment", env: map[string]string{EnvAddress: "10.0.0.1:7233", EnvNamespace: "prod", EnvTaskQueue: "q2"},
			addr: "10.0.0.1:7233", ns: "prod", tq: "q2"},
		{name: "given wins", env: map[string]string{EnvAddress: "10.0.0.1:7233", EnvNamespace: "prod", EnvTaskQueue: "q2"},
			given: Options{Address: "h:1", Namespace: "n", TaskQueue: "t"}, addr: "h:1", ns: "n", tq: "t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			o := c.given
			o.fill()
			require.Equal(t, c.addr, o.Address)
			require.Equal(t, c.ns, o.Namespace)
			require.Equal(t, c.tq, o.TaskQueue)
		})
	}
}
