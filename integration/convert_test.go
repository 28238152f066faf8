package integration

import (
	"bytes"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func converterFromPayload(p *commonpb.Payload, v any) error {
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
