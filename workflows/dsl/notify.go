package dsl

import (
	"fmt"
	"strings"

	"github.com/weftworks/weft/internal/webhook"
)

// notifyFrom reads the file's "notify" list: strings (a webhook's name or a URL) and objects
// {"to", "events", "slack"}. Values of the wrong type are left out (the schema reported them).
func notifyFrom(v any) []webhook.Entry {
	list, _ := v.([]any)
	var out []webhook.Entry
	for _, it := range list {
		switch x := it.(type) {
		case string:
			out = append(out, webhook.Entry{To: x})
		case map[string]any:
			e := webhook.Entry{To: str(x, "to"), Slack: boolean(x, "slack")}
			evs, _ := x["events"].([]any)
			for _, ev := range evs {
				if s, ok := ev.(string); ok {
					e.Events = append(e.Events, s)
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// checkNotify checks each notify entry: a URL is absolute http(s); a name is one the operator
// could declare; slack is for URLs (a declared webhook's format is the operator's).
func (c *compiler) checkNotify() {
	for i, e := range c.def.Notify {
		ptr := fmt.Sprintf("/notify/%d", i)
		if c.isBad(ptr) {
			continue
		}
		if e.IsURL() {
			if err := webhook.CheckURL(e.To); err != nil {
				c.errAt(ptr, err.Error(), "write the receiver's address, https://host/path, or the name of a webhook the operator declared in WEFT_WEBHOOKS")
			}
			continue
		}
		if err := webhook.CheckName(e.To); err != nil {
			c.errAt(ptr, err.Error(), "name a webhook the operator declared in WEFT_WEBHOOKS, or give a URL (https://...)")
		}
		if e.Slack {
			c.errAt(ptr+"/slack", fmt.Sprintf("slack is set by the operator for webhook %q", e.To), "remove it: the webhook's declaration in WEFT_WEBHOOKS says whether it is Slack's")
		}
	}
}

// CheckClientNotify refuses what a definition sent by a client may not do with notify
// (docs/security.md): send the run's events to an address of its choosing. It may name the
// webhooks the operator declared.
func CheckClientNotify(def *Definition) error {
	var urls []string
	for i, e := range def.Notify {
		if e.IsURL() {
			urls = append(urls, fmt.Sprintf("notify[%d] (%s)", i, webhook.Redact(e.To)))
		}
	}
	if len(urls) == 0 {
		return nil
	}
	return fmt.Errorf("%s gives a URL: a definition sent by a client may only name the webhooks the operator declared on the worker, as \"notify\": [\"NAME\"]; an operator allows an address on purpose by declaring it in the worker's WEFT_WEBHOOKS file, or by putting this workflow in the workflows directory", strings.Join(urls, ", "))
}
