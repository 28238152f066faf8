package main

import (
	"context"

	"github.com/weftworks/weft/devdb"
	"github.com/weftworks/weft/devserver"
	"github.com/weftworks/weft/starter"
)

func main() {
	starter.ProvideStack(starter.StackProvider{
		Temporal: func(ctx context.Context, o starter.TemporalOptions) (*starter.RunningTemporal, error) {
			srv, err := devserver.Start(ctx, devserver.Options{DataDir: o.DataDir, Host: o.Host, Port: o.Port, UIPort: o.UIPort,
				Namespace: o.Namespace, LogFile: o.LogFile, CodecEndpoint: o.CodecEndpoint, Postgres: o.Postgres, HistoryShards: o.HistoryShards})
			if err != nil {
				return nil, err
			}
			return &starter.RunningTemporal{Address: srv.Address, UIAddress: srv.UIAddress, Namespace: srv.Namespace, Stop: srv.Stop}, nil
		},
		Store: func(ctx context.Context, dir string, port int) (*starter.RunningStore, error) {
			return store(devdb.Start(ctx, dir, port))
		},
		StorePostgres: func(ctx context.Context, pg, host string, port int) (*starter.RunningStore, error) {
			return store(devdb.StartPostgres(ctx, pg, host, port))
		},
	})
	starter.Main()
}

func store(db *devdb.DB, err error) (*starter.RunningStore, error) {
	if err != nil {
		return nil, err
	}
	return &starter.RunningStore{URI: db.URI, Stop: db.Stop}, nil
}
