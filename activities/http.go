package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/html"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/netaddr"
)

// httpAllowed reports whether the tool may connect to ip: public addresses always; private,
// loopback, link-local, shared (carrier-grade NAT, where some clouds keep their metadata
// service), special-purpose and reserved ones only when the allowlist (WEFT_HTTP_ALLOW) names
// them. An IPv6 address that carries an IPv4 one (NAT64, 6to4, IPv4-compatible) is judged by the
// IPv4 address it reaches.
func (t *Tools) httpAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if publicAddr(ip) {
		return true
	}
	for _, a := range t.cfg.HTTPAllow {
		if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip) {
			return true
		}
		if addr, err := netip.ParseAddr(a); err == nil && addr == ip {
			return true
		}
	}
	return false
}

// publicAddr reports whether ip is an address of the public internet (internal/netaddr holds the
// one classification, which `weft check` uses too).
func publicAddr(ip netip.Addr) bool { return netaddr.Public(ip) }

// httpClient checks the address actually dialled (after DNS), so a name that resolves to a
// private address is refused too.
func (t *Tools) httpClient(timeout time.Duration) *http.Client {
	guard := guardedTransport(timeout, t.httpAllowed, "private, loopback and link-local addresses need WEFT_HTTP_ALLOW")
	return &http.Client{Timeout: timeout, Transport: guard,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("stopped after 5 redirects")
			}
			return nil
		}}
}

// guardedTransport dials only addresses allowed accepts, judged by the address actually dialled
// (after DNS), and uses no proxy; a refused dial says "refusing to connect to IP: " and why.
func guardedTransport(timeout time.Duration, allowed func(netip.Addr) bool, why string) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout, Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		if !allowed(ip) {
			return &InputError{Msg: fmt.Sprintf("refusing to connect to %s: %s", ip, why)}
		}
		return nil
	}}
	return &http.Transport{DialContext: dialer.DialContext, Proxy: nil}
}

func init() { bind(toolspec.HTTP, (*Tools).http) }

func (t *Tools) http(ctx context.Context, in toolspec.HTTPIn) (toolspec.HTTPOut, *toolspec.Usage, error) {
	var none toolspec.HTTPOut
	timeout := 30 * time.Second
	switch v := in.Timeout.(type) {
	case float64: // vai writes milliseconds
		if v > 0 {
			timeout = time.Duration(v) * time.Millisecond
		}
	case string:
		d, err := toolspec.ParseDuration(v)
		if err == nil && d == 0 {
			err = fmt.Errorf("%q is no time: write a duration over 0, e.g. \"30s\", or leave timeout out for 30s", v)
		}
		if err != nil {
			return none, nil, &InputError{Msg: "timeout " + err.Error()}
		}
		timeout = d
	}
	maxBytes := in.MaxBytes
	method := strings.ToUpper(in.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	contentType := ""
	// As vai's http, only POST, PUT and PATCH send a body.
	if sendsBody := method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch; sendsBody {
		switch b := in.Body.(type) {
		case nil:
		case string:
			body, contentType = strings.NewReader(b), "text/plain; charset=utf-8"
		default:
			data, err := json.Marshal(b)
			if err != nil {
				return none, nil, &InputError{Msg: "body is not JSON: " + err.Error()}
			}
			body, contentType = bytes.NewReader(data), "application/json"
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, in.URL, body)
	if err != nil {
		return none, nil, &InputError{Msg: err.Error()}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range in.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "weft-http-tool")
	start := time.Now()
	resp, err := t.httpClient(timeout).Do(req)
	if err != nil {
		var ie *InputError
		if asInput(err, &ie) {
			return none, nil, ie
		}
		// The tool's name already leads the message ("http: "): name the request instead, and
		// drop *url.Error's own `Get "URL": ` prefix, which would say it again.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return none, nil, provider.Network(httpTarget(req), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return none, nil, provider.Network(httpTarget(req), fmt.Errorf("reading the response: %w", err))
	}
	truncated := int64(len(data)) > maxBytes
	if truncated {
		data = data[:maxBytes]
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return none, nil, provider.FromStatus(httpTarget(req), resp.StatusCode, resp.Header, strings.TrimSpace(string(data[:min(len(data), 200)])), "")
	}
	out := toolspec.HTTPOut{Status: resp.StatusCode, StatusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))),
		Headers: make(map[string]string, len(resp.Header)), Truncated: truncated, DurationMs: time.Since(start).Milliseconds()}
	for k, v := range resp.Header {
		out.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	out.Body, out.Text = httpBody(data, resp.Header.Get("Content-Type"), in)
	return out, nil, nil
}

// httpBody is a response's body as vai's http gives it (body) and as weft's gave it (text):
// body is the response parsed as JSON when the responseType is json (vai's default, unless extract
// is "text") and it parses, whatever the Content-Type says, else its text; text is the text when
// the Content-Type does not say JSON or the body does not parse. extract "text" strips the HTML
// tags from a body that is text, in both.
func httpBody(data []byte, contentType string, in toolspec.HTTPIn) (body any, text *string) {
	responseType := in.ResponseType
	if responseType == "" {
		responseType = "json"
		if in.Extract == "text" {
			responseType = "text"
		}
	}
	s := string(data)
	if in.Extract == "text" {
		s = stripHTML(s)
	}
	var parsed any
	jsonOK := json.Unmarshal(data, &parsed) == nil
	if !strings.Contains(contentType, "json") || !jsonOK {
		text = &s
	}
	if responseType == "json" && jsonOK {
		return parsed, text
	}
	return s, text
}

// httpBlocks are the elements whose tags vai's stripHtml makes line breaks.
var httpBlocks = map[string]bool{"p": true, "div": true, "br": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"h5": true, "h6": true, "li": true, "tr": true, "blockquote": true, "section": true, "article": true,
	"header": true, "footer": true, "nav": true, "pre": true}

// stripHTML is vai's stripHtml (src/lib/readers.js) on an HTML tokenizer instead of regular
// expressions: script and style are dropped, the tags of block elements become line breaks, other
// tags are removed, entities are decoded, three or more line breaks become two, and the ends are
// trimmed.
func stripHTML(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	skip := ""
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			if skip == "" {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch {
			case skip != "":
				if tt == html.EndTagToken && tag == skip {
					skip = ""
				}
			case (tag == "script" || tag == "style") && tt == html.StartTagToken:
				skip = tag
			case httpBlocks[tag]:
				b.WriteByte('\n')
			}
		}
	}
	out := strings.ReplaceAll(b.String(), "\u00a0", " ") // vai decodes &nbsp; as a space
	for strings.Contains(out, "\n\n\n") {
		out = strings.ReplaceAll(out, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(out)
}

// httpTarget names a request in errors: method and URL, without user info or query (they may hold
// credentials).
func httpTarget(req *http.Request) string {
	u := *req.URL
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return req.Method + " " + u.String()
}
