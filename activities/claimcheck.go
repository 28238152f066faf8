package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftworks/weft/activities/toolspec"
	"go.temporal.io/sdk/temporal"
)

// Large outputs never go into workflow history, whose payloads Temporal limits to 2 MB: the
// worker keeps them in the knowledge store and the step's output holds a reference,
// {"$weftBlob": id, "size": bytes, "preview": "..."}. Tool activities resolve references in their
// inputs before they run, so a value passed whole from step to step ({{ page.output.body }})
// arrives whole at no extra cost. A template or expression that looks inside a stored value (its
// length, a field, text around it, a condition, forEach items, an inline data step) is evaluated
// by the evaluate activity (evaluate.go) instead of workflow code: it reads the stored values,
// evaluates with the interpreter's engine and stores a large result again, so templates see the
// value, never the reference.

// DefaultClaimCheckAbove is the output size from which values are stored (WEFT_CLAIM_CHECK_ABOVE).
const DefaultClaimCheckAbove = 256 << 10

// BlobKey marks a reference to a stored value.
const BlobKey = toolspec.BlobKey

// itemRef is a reference to element i of a stored list ("id@i"): the outputs of a batch are
// stored together, and each item's reference points at its own. A reader that does not know the
// form fails to find "id@i" rather than reading the whole list.
func itemRef(id string, i int, data []byte) map[string]any {
	return shortBlobRef(fmt.Sprintf("%s@%d", id, i), data)
}

// splitItemRef returns the stored list's id and the element of an item reference.
func splitItemRef(ref string) (id string, item int, ok bool) {
	id, n, found := strings.Cut(ref, "@")
	if !found {
		return ref, 0, false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return ref, 0, false
	}
	return id, i, true
}

// Blobs stores and reads large values.
type Blobs interface {
	PutBlob(ctx context.Context, data []byte) (string, error)
	GetBlob(ctx context.Context, id string) ([]byte, error)
}

// PutBlob implements Blobs on the knowledge store (database WEFT_DB).
func (t *Tools) PutBlob(ctx context.Context, data []byte) (string, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return "", err
	}
	return store.PutBlob(ctx, t.databaseNamed(""), data)
}

// GetBlob implements Blobs.
func (t *Tools) GetBlob(ctx context.Context, id string) ([]byte, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return nil, err
	}
	return store.GetBlob(ctx, t.databaseNamed(""), id)
}

// ClaimCheckAbove is the configured threshold.
func (t *Tools) ClaimCheckAbove() int {
	if t.cfg.ClaimCheckAbove > 0 {
		return t.cfg.ClaimCheckAbove
	}
	return DefaultClaimCheckAbove
}

func blobRef(id string, data []byte) map[string]any {
	return map[string]any{BlobKey: id, "size": len(data), "preview": preview(data, 300)}
}

// preview is data's first n characters, with "…" when there are more. It reads only those
// (a batch makes a reference to each of thousands of vectors).
func preview(data []byte, n int) string {
	i := 0
	for k := 0; k < n && i < len(data); k++ {
		_, size := utf8.DecodeRune(data[i:])
		i += size
	}
	if i >= len(data) {
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	return strings.ToValidUTF8(string(data[:i]), "\uFFFD") + "…"
}

// claimCheck replaces the parts of an output over the threshold by references: the large fields
// of an object, or the whole value.
func claimCheck(ctx context.Context, blobs Blobs, above int, out any) (any, error) {
	data, err := json.Marshal(out)
	if err != nil || len(data) <= above {
		return out, err
	}
	store := func(v any, b []byte) (any, error) {
		id, err := blobs.PutBlob(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("the output is %d KiB, more than weft keeps in workflow history, and it cannot be stored: %w (set MONGODB_URI)", len(data)>>10, err)
		}
		return blobRef(id, b), nil
	}
	if m, ok := out.(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		copied := make(map[string]any, len(m))
		total := 0
		for _, k := range keys {
			b, _ := json.Marshal(m[k])
			if len(b) > above/4 {
				ref, err := store(m[k], b)
				if err != nil {
					return nil, err
				}
				copied[k] = ref
				continue
			}
			copied[k] = m[k]
			total += len(b)
		}
		if total <= above {
			return copied, nil
		}
	}
	return store(out, data)
}

// shortBlobRef is a reference whose preview is cut to 40 characters: references that travel by
// the thousand (a forEach's outputs, a list's items).
func shortBlobRef(id string, b []byte) map[string]any {
	return map[string]any{BlobKey: id, "size": len(b), "preview": preview(b, 40)}
}

// jsonList is the JSON list of elements already encoded (nil: null). It joins them rather than
// marshal the list, which would scan and copy every element again (a batch's outputs are
// thousands of vectors).
func jsonList(elems [][]byte) []byte {
	size := 2
	for _, b := range elems {
		size += len(b) + 5
	}
	all := make([]byte, 0, size)
	all = append(all, '[')
	for i, b := range elems {
		if i > 0 {
			all = append(all, ',')
		}
		if b == nil {
			b = []byte("null")
		}
		all = append(all, b...)
	}
	return append(all, ']')
}

// resolveBlobs replaces references in a tool's inputs by the stored values (references inside
// them included), as the evaluate activity reads them.
func resolveBlobs(ctx context.Context, blobs Blobs, v any) (any, error) {
	r := &storedReader{blobs: blobs, read: map[string]any{}}
	return r.resolve(ctx, v, 0)
}

// StoreValues implements ActivityBlobsPut: the values are stored together, as one list (one
// write: one per value made 1,000 outputs take minutes on the embedded store), and each is
// replaced by a reference to its element with a short preview.
func (t *Tools) StoreValues(ctx context.Context, in map[string]any) (map[string]any, error) {
	values, _ := in["values"].([]any)
	datas := make([][]byte, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		datas[i] = b
	}
	all := jsonList(datas)
	if _, err := t.Store(ctx); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("storing forEach outputs too large to hand back: %v (set MONGODB_URI on the worker)", err), toolspec.ErrMissingConfig, err)
	}
	id, err := t.PutBlob(ctx, all)
	if err != nil {
		return nil, err // retryable: the store may be back soon
	}
	refs := make([]any, len(values))
	for i, b := range datas {
		refs[i] = itemRef(id, i, b)
	}
	return map[string]any{"refs": refs}, nil
}
