package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"a","Test":"TestFast"}`,
		`{"Action":"output","Package":"a","Test":"TestFast","Output":"=== RUN   TestFast\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestFast","Elapsed":0.5}`,
		`{"Action":"output","Package":"a","Test":"TestSlow","Output":"slow log line\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":12.5}`,
		`{"Action":"pass","Package":"a","Test":"TestSlow/sub","Elapsed":12}`,
		`{"Action":"pass","Package":"a","Elapsed":13.1}`,
		`{"Action":"output","Package":"b","Test":"TestBroken","Output":"    b_test.go:9: want 2, got 3\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestBroken","Elapsed":0.1}`,
		`{"Action":"output","Package":"b","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"b","Elapsed":2.25}`,
		`{"Action":"skip","Package":"c","Elapsed":0}`,
		`# d`,
		`d/x.go:3:1: syntax error`,
	}, "\n")
	var out strings.Builder
	failed, table, err := run(strings.NewReader(in), &out, 10*time.Second)
	require.NoError(t, err)
	require.True(t, failed)
	require.Equal(t, "ok  \ta\t13.100s\n    b_test.go:9: want 2, got 3\nFAIL\nFAIL\tb\t2.250s\n?   \tc\t[no test files]\n# d\nd/x.go:3:1: syntax error\n", out.String())
	require.Equal(t, "test times: 2 packages, 15 s summed (packages run side by side, so the wall time is less)\n"+
		"     13.1 s  a\n      2.2 s  b\ntests over 10s: 1\n     12.5 s  a TestSlow\n", table)

	failed, _, err = run(strings.NewReader(`{"Action":"pass","Package":"a","Elapsed":1}`), &out, time.Second)
	require.NoError(t, err)
	require.False(t, failed)
}
