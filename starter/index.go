package starter

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities/mongostore"
)

type storeFlags struct {
	uri, db, collection string
}

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.uri, "mongodb-uri", settingOr("MONGODB_URI", "mongodb://127.0.0.1:27017/"), "knowledge store (env MONGODB_URI; weft dev's embedded database by default)")
	cmd.Flags().StringVar(&f.db, "db", envOr("WEFT_DB", "weft"), "database (env WEFT_DB)")
	cmd.Flags().StringVar(&f.collection, "collection", "", "collection (required)")
}

func (f *storeFlags) open(cmd *cobra.Command) (*mongostore.Store, error) {
	if f.collection == "" {
		return nil, invalid(errors.New("--collection is required"))
	}
	return mongostore.Open(cmd.Context(), f.uri)
}

func newIndexCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Manage the vector search index of a collection (MongoDB Atlas / atlas-local)",
		Long: "Servers with Atlas Search use the index for $vectorSearch; others (FerretDB, plain MongoDB)\n" +
			"have no search indexes and weft searches them exactly instead.",
	}
	var f storeFlags
	var dims int
	var filters []string
	create := &cobra.Command{
		Use:   "create --collection C [--dimensions N] [--filter metadata.type]...",
		Short: "Create weft's vector index (cosine over embedding) with optional pre-filter fields",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer s.Close(cmd.Context())
			if dims == 0 {
				cols, err := s.Collections(cmd.Context(), f.db)
				if err != nil {
					return err
				}
				for _, c := range cols {
					if c.Name == f.collection {
						dims = c.Dimensions
					}
				}
				if dims == 0 {
					return invalid(fmt.Errorf("%s.%s has no embedded chunks to size the index from; pass --dimensions", f.db, f.collection))
				}
			}
			name, err := s.CreateVectorIndex(cmd.Context(), f.db, f.collection, dims, filters)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created %s on %s.%s (%d dimensions, cosine%s); it is queryable once its status is READY (weft index list).\n",
				name, f.db, f.collection, dims, filterNote(filters))
			return nil
		},
	}
	f.register(create)
	create.Flags().IntVar(&dims, "dimensions", 0, "embedding size (default: read from the collection)")
	create.Flags().StringArrayVar(&filters, "filter", nil, "metadata path usable in search filters (repeatable)")
	var lf storeFlags
	var asJSON bool
	list := &cobra.Command{
		Use:   "list --collection C",
		Short: "List the collection's vector search indexes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := lf.open(cmd)
			if err != nil {
				return err
			}
			defer s.Close(cmd.Context())
			idx, err := s.ListVectorIndexes(cmd.Context(), lf.db, lf.collection)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), idx)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATUS\tDIMENSIONS\tFILTERS")
			for _, i := range idx {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", i.Name, i.Status, i.Dimensions, strings.Join(i.Filters, ","))
			}
			return tw.Flush()
		},
	}
	lf.register(list)
	jsonFlag(list, &asJSON, "print JSON")
	cmd.AddCommand(create, list)
	return cmd
}

func filterNote(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return ", filters " + strings.Join(f, ", ")
}
