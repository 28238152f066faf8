package starter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	weftclient "github.com/weftworks/weft/client"
)

// newPingCommand: a health check for containers and scripts, which have no shell or curl in
// weft's image: exit 0 when what is named answers.
func newPingCommand() *cobra.Command {
	var temporalAddr, mongoURI, url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ping (--temporal HOST:PORT | --mongodb URI | --http URL)",
		Short: "Exit 0 when Temporal, a MongoDB-wire database or an HTTP endpoint answers (health checks)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var err error
			switch {
			case temporalAddr != "":
				err = weftclient.CheckHealth(ctx, weftclient.HealthCheck{Dial: &weftclient.Options{Address: temporalAddr}, Timeout: timeout}).Temporal
			case mongoURI != "":
				err = weftclient.CheckHealth(ctx, weftclient.HealthCheck{Store: mongoPing(mongoURI), Timeout: timeout}).Store
			case url != "":
				var req *http.Request
				if req, err = http.NewRequestWithContext(ctx, http.MethodGet, url, nil); err == nil {
					var resp *http.Response
					if resp, err = http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
						if resp.StatusCode >= 400 {
							err = fmt.Errorf("HTTP %d", resp.StatusCode)
						}
					}
				}
			default:
				return invalid(errors.New("name what to ping: --temporal HOST:PORT, --mongodb URI or --http URL"))
			}
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&temporalAddr, "temporal", "", "a Temporal frontend, host:port")
	cmd.Flags().StringVar(&mongoURI, "mongodb", "", "a MongoDB-wire database, mongodb://host:port/")
	cmd.Flags().StringVar(&url, "http", "", "an HTTP URL that must answer below 400")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait")
	return cmd
}

// mongoPing asks the MongoDB-wire database at uri to answer a ping (a store check for
// client.CheckHealth), within ctx.
func mongoPing(uri string) func(context.Context) error {
	return func(ctx context.Context) error {
		timeout := 3 * time.Second
		if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d)
		}
		c, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(timeout).SetConnectTimeout(timeout))
		if err != nil {
			return err
		}
		defer func() { _ = c.Disconnect(context.Background()) }()
		return c.Ping(ctx, nil)
	}
}
