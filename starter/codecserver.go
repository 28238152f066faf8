package starter

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weftworks/weft/auth"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/codec"
)

func newCodecServerCommand() *cobra.Command {
	var host, uiOrigin, keyFile string
	var port int
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve Temporal's remote codec endpoint so the Web UI and the temporal CLI show decoded payloads",
		Long: "Decodes (and encodes) payloads with the codecs WEFT_CODEC_KEYS / WEFT_CODEC_KEY_FILE configure:\n" +
			"POST /decode and /encode, as the Temporal UI (codec endpoint setting) and `temporal --codec-endpoint`\n" +
			"call them. CORS allows only --ui-origin. Bound to 127.0.0.1 by default; on another address every\n" +
			"request needs a bearer key (weft mcp generate-key, or WEFT_MCP_KEY), which the UI sends when its\n" +
			"codec setting passes the access token.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := codec.FromEnv(os.Getenv)
			if err != nil {
				return invalid(err)
			}
			codecs, err := codec.Codecs(o)
			if err != nil {
				return invalid(err)
			}
			if len(o.Keys) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "weft codec-server: no keys (WEFT_CODEC_KEYS): payloads are only decompressed")
			}
			var keys *auth.Keys
			if !isLoopback(host) {
				if keys, err = auth.LoadKeys(keyFile, os.Getenv("WEFT_MCP_KEY")); err != nil {
					return err
				}
				if keys.Empty() {
					return invalid(errors.New("serving beyond this machine needs a key: weft mcp generate-key, or WEFT_MCP_KEY"))
				}
			}
			h := CodecHandler(codecs, uiOrigin, keys)
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", addr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "weft codec-server on http://%s (UI origin %s)\n", l.Addr(), uiOrigin)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() { <-ctx.Done(); _ = srv.Close() }()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "address to bind")
	cmd.Flags().IntVar(&port, "port", 8081, "port")
	cmd.Flags().StringVar(&uiOrigin, "ui-origin", "http://127.0.0.1:8233", "the Temporal UI's origin, the only one CORS allows")
	cmd.Flags().StringVar(&keyFile, "key-file", auth.KeyFile(), "bearer keys (off-host only)")
	return cmd
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// CodecHandler is Temporal's payload codec HTTP handler with CORS limited to one origin and,
// when keys is not nil, a bearer key required.
func CodecHandler(codecs []converter.PayloadCodec, origin string, keys *auth.Keys) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(codecs...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if o != origin {
				http.Error(w, "origin not allowed: start weft codec-server with --ui-origin "+o, http.StatusForbidden)
				return
			}
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if keys != nil {
			auth := r.Header.Get("Authorization")
			if _, ok := keys.Identify(strings.TrimPrefix(auth, "Bearer ")); !strings.HasPrefix(auth, "Bearer ") || !ok {
				http.Error(w, "send Authorization: Bearer <key>", http.StatusUnauthorized)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, 8<<20)
		inner.ServeHTTP(w, r)
	})
}
