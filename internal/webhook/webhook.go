package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftworks/weft/internal/safefile"
)

// The events a webhook may receive.
const (
	RunStarted      = "run.started"
	RunCompleted    = "run.completed"
	RunFailed       = "run.failed"
	StepFailed      = "step.failed"
	ReviewRequested = "review.requested"
	ReviewDecided   = "review.decided"
)

// Events lists every event name, in the order they are documented.
var Events = []string{ReviewRequested, ReviewDecided, RunStarted, RunCompleted, RunFailed, StepFailed}

// DefaultEvents are what a webhook gets when nothing selects its events.
var DefaultEvents = []string{ReviewRequested, RunFailed, RunCompleted}

// DefaultConsoleURL is where links point when WEFT_CONSOLE_URL is not set: the console's default
// address (console.DefaultAddress).
const DefaultConsoleURL = "http://127.0.0.1:8234"

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256, keyed with WEFT_WEBHOOK_SECRET, of
// the TimestampHeader's value, ".", and the body; TimestampHeader when the attempt was signed
// (Unix seconds), so a receiver refuses a captured delivery replayed later (Verify);
// DeliveryHeader a delivery's id, the same on every attempt, so a receiver can drop a repeat.
const (
	SignatureHeader = "X-Weft-Signature"
	TimestampHeader = "X-Weft-Timestamp"
	DeliveryHeader  = "X-Weft-Delivery"
	EventHeader     = "X-Weft-Event"
)

// DefaultTolerance is how far from the receiver's clock a delivery's timestamp may be for
// Verify (tolerance 0): wide enough for clocks that drift, narrow enough that a captured
// delivery cannot be replayed for long.
const DefaultTolerance = 5 * time.Minute

// Webhook is one the operator declared (WEFT_WEBHOOKS).
type Webhook struct {
	// Name lets workflow files select it ("notify": ["ops"]); URLs given as a comma-separated
	// list are named webhook-1, webhook-2, ...
	Name string `json:"name,omitempty"`
	URL  string `json:"url"`
	// Events it receives (default DefaultEvents).
	Events []string `json:"events,omitempty"`
	// Slack sends {"text": "..."} (a Slack incoming webhook) instead of weft's JSON.
	Slack bool `json:"slack,omitempty"`
	// Runs is "all" (the default: every run's events) or "named" (only runs whose file's notify
	// names it).
	Runs string `json:"runs,omitempty"`
}

// Entry is one of a workflow file's "notify" entries: an operator's webhook by name, or (in the
// operator's own files only) a URL; with the events it selects and, for a URL, the Slack format.
type Entry struct {
	To     string   `json:"to"`
	Events []string `json:"events,omitempty"`
	Slack  bool     `json:"slack,omitempty"`
}

// IsURL tells an entry that gives an address from one that names a webhook.
func (e Entry) IsURL() bool { return strings.Contains(e.To, "://") }

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,40}$`)

// CheckName reports a webhook name files cannot use.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("webhook name %q: start with a letter, then letters, digits, _ and - (up to 41)", name)
	}
	return nil
}

// CheckURL reports a webhook address that is not an absolute http(s) URL.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook url %q: want an absolute http:// or https:// URL", Redact(raw))
	}
	return nil
}

// CheckEvents reports event names that are not in Events.
func CheckEvents(events []string) error {
	for _, e := range events {
		if !slices.Contains(Events, e) {
			return fmt.Errorf("event %q is not one weft sends (%s)", e, strings.Join(Events, ", "))
		}
	}
	return nil
}

// Redact shows a URL without its path, query and user info: a Slack webhook's path is its secret.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// MaxConfigBytes bounds the WEFT_WEBHOOKS file.
const MaxConfigBytes = 1 << 20

// Load reads WEFT_WEBHOOKS: "" (none), comma-separated URLs (each gets DefaultEvents of every
// run), or the path of a JSON file {"webhooks": [{"name", "url", "events", "slack", "runs"}]}.
func Load(setting string) ([]Webhook, error) {
	setting = strings.TrimSpace(setting)
	if setting == "" {
		return nil, nil
	}
	var hooks []Webhook
	if strings.HasPrefix(setting, "http://") || strings.HasPrefix(setting, "https://") {
		for i, u := range strings.Split(setting, ",") {
			if u = strings.TrimSpace(u); u != "" {
				hooks = append(hooks, Webhook{Name: fmt.Sprintf("webhook-%d", i+1), URL: u})
			}
		}
	} else {
		data, err := safefile.ReadHint(setting, MaxConfigBytes, "WEFT_WEBHOOKS", "set WEFT_WEBHOOKS to comma-separated URLs or the path of a JSON file {\"webhooks\": [{\"url\": ...}]}")
		if err != nil {
			if refused := (*safefile.Error)(nil); errors.As(err, &refused) {
				return nil, err
			}
			return nil, fmt.Errorf("WEFT_WEBHOOKS: %w", err)
		}
		var f struct {
			Webhooks []Webhook `json:"webhooks"`
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("WEFT_WEBHOOKS: %s: %w (expected {\"webhooks\": [{\"name\": \"ops\", \"url\": \"https://...\", \"events\": [\"review.requested\"], \"slack\": false, \"runs\": \"all\"}]})", setting, err)
		}
		hooks = f.Webhooks
		for i := range hooks {
			if hooks[i].Name == "" {
				hooks[i].Name = fmt.Sprintf("webhook-%d", i+1)
			}
		}
	}
	seen := map[string]bool{}
	for _, h := range hooks {
		where := "WEFT_WEBHOOKS"
		if err := CheckName(h.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if seen[h.Name] {
			return nil, fmt.Errorf("%s: webhook %q is declared twice: give each a different name", where, h.Name)
		}
		seen[h.Name] = true
		if err := CheckURL(h.URL); err != nil {
			return nil, fmt.Errorf("%s: webhook %q: %w", where, h.Name, err)
		}
		if err := CheckEvents(h.Events); err != nil {
			return nil, fmt.Errorf("%s: webhook %q: %w", where, h.Name, err)
		}
		if h.Runs != "" && h.Runs != "all" && h.Runs != "named" {
			return nil, fmt.Errorf("%s: webhook %q: runs %q: want \"all\" (every run) or \"named\" (runs whose file's notify names it)", where, h.Name, h.Runs)
		}
	}
	return hooks, nil
}

// PlanRequest asks the worker which webhooks a run notifies: the file's entries and who the
// definition came from ("client": it may only name the operator's webhooks).
type PlanRequest struct {
	Workflow string  `json:"workflow"`
	Origin   string  `json:"origin,omitempty"`
	Notify   []Entry `json:"notify,omitempty"`
}

// Route is where a run sends which events: an operator's webhook by name (its address stays in
// the worker's settings, out of history) or an operator file's URL.
type Route struct {
	Name   string   `json:"name,omitempty"`
	URL    string   `json:"url,omitempty"`
	Events []string `json:"events"`
	Slack  bool     `json:"slack,omitempty"`
}

// Wants tells whether the route sends event.
func (r Route) Wants(event string) bool { return slices.Contains(r.Events, event) }

// Plan answers a PlanRequest.
type Plan struct {
	Routes []Route `json:"routes,omitempty"`
	// Warnings say which entries were left out and why (the run logs them).
	Warnings []string `json:"warnings,omitempty"`
}

// Resolve plans a run's notifications over the operator's webhooks: every webhook declared for
// all runs, and the file's entries (names of declared webhooks; URLs only from operator files).
func Resolve(hooks []Webhook, req PlanRequest) Plan {
	var p Plan
	byName := map[string]Webhook{}
	for _, h := range hooks {
		byName[h.Name] = h
	}
	named := map[string]Entry{}
	for _, e := range req.Notify {
		if !e.IsURL() {
			named[e.To] = e
		}
	}
	for _, h := range hooks {
		e, ok := named[h.Name]
		if !ok && h.Runs == "named" {
			continue
		}
		events := h.Events
		if ok && len(e.Events) > 0 {
			events = e.Events
		}
		if len(events) == 0 {
			events = DefaultEvents
		}
		p.Routes = append(p.Routes, Route{Name: h.Name, Events: events, Slack: h.Slack})
	}
	for _, e := range req.Notify {
		switch {
		case !e.IsURL():
			if _, ok := byName[e.To]; !ok {
				p.Warnings = append(p.Warnings, fmt.Sprintf("notify: webhook %q is not declared on the worker (WEFT_WEBHOOKS declares: %s): nothing is sent to it", e.To, declared(hooks)))
			}
		case req.Origin != "":
			p.Warnings = append(p.Warnings, fmt.Sprintf("notify: a definition sent by a client may only name the operator's webhooks, not a URL (%s): nothing is sent to it", Redact(e.To)))
		default:
			events := e.Events
			if len(events) == 0 {
				events = DefaultEvents
			}
			p.Routes = append(p.Routes, Route{URL: e.To, Events: events, Slack: e.Slack})
		}
	}
	return p
}

func declared(hooks []Webhook) string {
	if len(hooks) == 0 {
		return "none"
	}
	names := make([]string, len(hooks))
	for i, h := range hooks {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// Notification is what happened, as the run saw it; Delivery adds where it goes.
type Notification struct {
	Event    string    `json:"event"`
	Seq      int64     `json:"seq"`
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id"`
	Workflow string    `json:"workflow"`
	Step     string    `json:"step,omitempty"`
	// Title is the review's title (review.*).
	Title    string `json:"title,omitempty"`
	Error    string `json:"error,omitempty"`
	Decision string `json:"decision,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
}

// Delivery is one notification to one route; ID names it on every attempt.
type Delivery struct {
	ID           string       `json:"id"`
	Route        Route        `json:"route"`
	Origin       string       `json:"origin,omitempty"`
	Notification Notification `json:"notification"`
}

// Payload is the JSON body weft sends: the notification, its delivery id and the console link.
type Payload struct {
	ID string `json:"id"`
	Notification
	URL string `json:"url"`
}

// Link is the console page of a run.
func Link(consoleURL, runID string) string {
	if consoleURL == "" {
		consoleURL = DefaultConsoleURL
	}
	return strings.TrimRight(consoleURL, "/") + "/runs/" + url.PathEscape(runID)
}

// Body is what a delivery sends: weft's JSON, or {"text": ...} for Slack.
func Body(d Delivery, consoleURL string) ([]byte, error) {
	link := Link(consoleURL, d.Notification.RunID)
	if d.Route.Slack {
		return json.Marshal(map[string]string{"text": Text(d.Notification, link)})
	}
	return json.Marshal(Payload{ID: d.ID, Notification: d.Notification, URL: link})
}

// slackEscape escapes what Slack reads as markup in text a run supplies (a review's title, a
// step's error, which a file's author or a model may write): "<!channel>" or "<URL|label>" in a
// title must show as written, not ping a channel or pass off a link as the console's.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Text is a one-line account of a notification for people (Slack), ending with the link.
func Text(n Notification, link string) string {
	n.Workflow, n.Step, n.Title, n.Error = slackEscape.Replace(n.Workflow), slackEscape.Replace(n.Step), slackEscape.Replace(n.Title), slackEscape.Replace(n.Error)
	n.Decision, n.Reviewer, n.RunID = slackEscape.Replace(n.Decision), slackEscape.Replace(n.Reviewer), slackEscape.Replace(n.RunID)
	var s string
	switch n.Event {
	case ReviewRequested:
		s = fmt.Sprintf("Review waiting in %s (step %s): %s", n.Workflow, n.Step, n.Title)
	case ReviewDecided:
		s = fmt.Sprintf("Review %s in %s (step %s) by %s: %s", n.Decision, n.Workflow, n.Step, orSomeone(n.Reviewer), n.Title)
	case RunStarted:
		s = fmt.Sprintf("Run of %s started", n.Workflow)
	case RunCompleted:
		s = fmt.Sprintf("Run of %s completed", n.Workflow)
	case RunFailed:
		s = fmt.Sprintf("Run of %s failed: %s", n.Workflow, n.Error)
	case StepFailed:
		s = fmt.Sprintf("Step %s of %s failed: %s", n.Step, n.Workflow, n.Error)
	default:
		s = n.Event + " in " + n.Workflow
	}
	return fmt.Sprintf("%s (%s) <%s|open in the weft console>", s, n.RunID, link)
}

func orSomeone(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

// Sign is the X-Weft-Signature value of body sent at timestamp (Unix seconds, the
// X-Weft-Timestamp header): "sha256=" and the hex HMAC-SHA256, keyed with secret, of the
// timestamp in decimal, ".", and the body.
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// ErrBadSignature is wrapped by Verify's error for a delivery that is not weft's, was altered,
// or was signed too long ago (or ahead) of now.
var ErrBadSignature = errors.New("webhook signature refused")

// Verify is the receiver's check of a delivery (for receivers written in Go; others do the same,
// docs/workflows.md, "notify"): h's X-Weft-Timestamp is within tolerance of now (0: DefaultTolerance), and
// its X-Weft-Signature is Sign(secret, timestamp, body), compared in constant time. A delivery
// captured and sent again later than the tolerance is refused, as is one altered or unsigned.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := strconv.ParseInt(h.Get(TimestampHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a Unix time in seconds", ErrBadSignature, TimestampHeader, h.Get(TimestampHeader))
	}
	if age := now.Sub(time.Unix(ts, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now, outside the %s tolerance (a replay, or a clock off)", ErrBadSignature, time.Unix(ts, 0).UTC().Format(time.RFC3339), age.Round(time.Second), tolerance)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(h.Get(SignatureHeader))) {
		return fmt.Errorf("%w: %s does not match the body and timestamp (another secret, or an altered delivery)", ErrBadSignature, SignatureHeader)
	}
	return nil
}

// The worker's internal activities (not tools: no file can call them): ActivityPlan answers a
// PlanRequest, ActivityDeliver sends a Delivery.
const (
	ActivityPlan    = "weft.notify.plan"
	ActivityDeliver = "weft.notify.deliver"
)

type plainEntry Entry

// MarshalJSON writes an entry with nothing but its target as a bare string, as files write it.
func (e Entry) MarshalJSON() ([]byte, error) {
	if len(e.Events) == 0 && !e.Slack {
		return json.Marshal(e.To)
	}
	return json.Marshal(plainEntry(e))
}

// UnmarshalJSON reads a bare string (a name or URL) or {"to", "events", "slack"}.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = Entry{To: s}
		return nil
	}
	return json.Unmarshal(b, (*plainEntry)(e))
}
