package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/webhook"
)

// Hook binds an inbound trigger's name (POST /v1/hooks/{name}) to one of the operator's
// workflows: a request signed with Secret starts it, with the body as its inputs.
type Hook struct {
	Workflow string
	Secret   string
}

// hookIn names a hook; its body is read as it was signed.
type hookIn struct {
	Name string `path:"name" json:"-" jsonschema:"the hook's name, as the operator bound it (weft mcp --hook NAME=WORKFLOW)"`
}

// HookOut is the run a hook started.
type HookOut struct {
	ID       string `json:"id" jsonschema:"the run's id"`
	Workflow string `json:"workflow"`
}

// startHook checks the request's signature (webhook.Verify: the same HMAC-SHA256 of timestamp and
// body weft's own webhooks send, within webhook.DefaultTolerance of now) and starts the bound
// workflow. The run's id is derived from the signature, so the same signed request sent again is
// refused as a replay (409) for as long as the run is kept, and the timestamp refuses it after.
func startHook(c *call, in hookIn) (HookOut, error) {
	h, ok := c.api.o.Hooks[in.Name]
	if !ok {
		return HookOut{}, kindNotFound.problem(fmt.Sprintf("no hook %q: the operator binds one with weft mcp --hook NAME=WORKFLOW", in.Name))
	}
	body, err := io.ReadAll(c.r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return HookOut{}, tooLarge()
		}
		return HookOut{}, kindInvalid.problem("reading the request body: " + err.Error())
	}
	if err := webhook.Verify(h.Secret, c.r.Header, body, time.Now(), 0); err != nil {
		return HookOut{}, kindUnauthorized.problem(err.Error() + fmt.Sprintf(": sign the body as weft's webhooks are signed (%s: the Unix time; %s: sha256= and the hex HMAC-SHA256, keyed with the hook's secret, of the timestamp, \".\" and the body)", webhook.TimestampHeader, webhook.SignatureHeader))
	}
	inputs := map[string]any{}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &inputs); err != nil {
			return HookOut{}, invalid("", "the body is not a JSON object of the workflow's inputs: "+err.Error())
		}
	}
	var entry *weftclient.CatalogEntry
	for _, e := range weftclient.Catalog(c.api.o.WorkflowsDir, !c.api.o.NoBuiltins) {
		if e.Name == h.Workflow && e.Err == nil {
			entry = &e
		}
	}
	if entry == nil {
		return HookOut{}, kindUnavailable.problem(fmt.Sprintf("hook %q is bound to workflow %q, which the gateway does not offer (not in its workflows directory, or it does not load): the operator must fix the binding", in.Name, h.Workflow))
	}
	sum := sha256.Sum256([]byte(c.r.Header.Get(webhook.SignatureHeader)))
	id := "hook-" + in.Name + "-" + hex.EncodeToString(sum[:10])
	wc, err := c.client()
	if err != nil {
		return HookOut{}, err
	}
	replay := kindConflict.problem(fmt.Sprintf("this signed request started run %s already: a replay is refused; sign each delivery anew (a new timestamp)", id))
	if _, err := wc.Describe(c.ctx, id); err == nil {
		return HookOut{}, replay
	}
	run, err := wc.Start(c.ctx, entry.Workflow, weftclient.StartOptions{ID: id, Source: "hook:" + in.Name, Inputs: inputs,
		Resolver: weftclient.FileResolver(c.api.o.WorkflowsDir)})
	var ar *weftclient.AlreadyRunningError
	if errors.As(err, &ar) {
		return HookOut{}, replay
	}
	if err != nil {
		if weftclient.IsInvalid(err) {
			return HookOut{}, invalid("/", err.Error())
		}
		return HookOut{}, err
	}
	c.status = http.StatusCreated
	return HookOut{ID: run.ID, Workflow: entry.Workflow.Def.Name}, nil
}
