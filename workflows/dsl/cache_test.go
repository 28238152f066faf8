package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func TestLoadCached(t *testing.T) {
	src := []byte(`{"name":"c","steps":[{"id":"t","tool":"template","inputs":{"text":"x"}}]}`)
	a, err := dsl.LoadCached("c.json", src)
	require.NoError(t, err)
	b, err := dsl.LoadCached("c.json", append([]byte(nil), src...))
	require.NoError(t, err)
	require.Same(t, a, b, "the same name and content compile once")
	c, err := dsl.LoadCached("other.json", src)
	require.NoError(t, err)
	require.NotSame(t, a, c, "the name is part of the key: messages carry it")
	_, err = dsl.LoadCached("bad.json", []byte(`{"name":"b","steps":[{"id":"t","tool":"nope"}]}`))
	require.ErrorContains(t, err, "bad.json")
	_, err = dsl.LoadCached("bad.json", []byte(`{"name":"b","steps":[{"id":"t","tool":"nope"}]}`))
	require.ErrorContains(t, err, "unknown tool", "errors are not kept: each call reports them")
}
