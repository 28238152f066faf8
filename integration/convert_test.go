package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func converterFromPayload(p *commonpb.Payload, v any) error {
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "wf.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
