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
	"strings"
	"syscall"
	"time"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// httpAllowed reports whether the tool may connect to ip: public addresses always; private,
// loopback and link-local ones only when the allowlist (WEFT_HTTP_ALLOW) names them.
func (t *Tools) httpAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast()) {
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

// httpClient checks the address actually dialled (after DNS), so a name that resolves to a
// private address is refused too.
func (t *Tools) httpClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		if !t.httpAllowed(ip) {
			return &InputError{Msg: fmt.Sprintf("refusing to connect to %s: private, loopback and link-local addresses need WEFT_HTTP_ALLOW", ip)}
		}
		return nil
	}}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("stopped after 5 redirects")
			}
			return nil
		}}
}

func (t *Tools) http(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	timeout := 30 * time.Second
	if ms, ok := in["timeout"].(float64); ok && ms > 0 {
		in["timeout"] = fmt.Sprintf("%dms", int64(ms)) // vai writes milliseconds
	}
	if s := str(in, "timeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, nil, &InputError{Msg: fmt.Sprintf("timeout %q is not a duration", s)}
		}
		timeout = d
	}
	maxBytes := int64(num(in, "maxBytes", 1<<20))
	method := str(in, "method")
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	contentType := ""
	switch b := in["body"].(type) {
	case nil:
	case string:
		body, contentType = strings.NewReader(b), "text/plain; charset=utf-8"
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, nil, &InputError{Msg: "body is not JSON: " + err.Error()}
		}
		body, contentType = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, str(in, "url"), body)
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if hs, ok := in["headers"].(map[string]any); ok {
		for k, v := range hs {
			req.Header.Set(k, fmt.Sprint(v))
		}
	}
	req.Header.Set("User-Agent", "weft-http-tool")
	resp, err := t.httpClient(timeout).Do(req)
	if err != nil {
		var ie *InputError
		if asInput(err, &ie) {
			return nil, nil, ie
		}
		// The tool's name already leads the message ("http: "): name the request instead, and
		// drop *url.Error's own `Get "URL": ` prefix, which would say it again.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, provider.Network(httpTarget(req), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, nil, provider.Network(httpTarget(req), fmt.Errorf("reading the response: %w", err))
	}
	truncated := int64(len(data)) > maxBytes
	if truncated {
		data = data[:maxBytes]
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, nil, provider.FromStatus(httpTarget(req), resp.StatusCode, resp.Header, strings.TrimSpace(string(data[:min(len(data), 200)])), "")
	}
	out := map[string]any{"status": resp.StatusCode, "headers": map[string]any{"content-type": resp.Header.Get("Content-Type")}, "truncated": truncated}
	var parsed any
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && !truncated && json.Unmarshal(data, &parsed) == nil {
		out["body"] = parsed
	} else {
		out["text"] = string(data)
	}
	return out, nil, nil
}

// httpTarget names a request in errors: method and URL, without user info or query (they may hold
// credentials).
func httpTarget(req *http.Request) string {
	u := *req.URL
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return req.Method + " " + u.String()
}
