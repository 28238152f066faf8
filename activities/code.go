package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/codeindex"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/toolspec"
)

func init() {
	bind(toolspec.CodeIndex, (*Tools).codeIndex)
	bind(toolspec.CodeSearch, (*Tools).codeSearch)
	bind(toolspec.CodeStatus, (*Tools).codeStatus)
	bind(toolspec.CodeFindSimilar, (*Tools).codeFindSimilar)
}

// codeChunk is one chunk of an indexed file, before its embedding.
type codeChunk struct {
	file  codeindex.File
	index int
	chunk codeindex.Chunk
}

// codeChunks walks root and splits its files as code_index does: the chunks in path order, and
// what the walk found. It reads files only (the measured part of indexing without embeddings).
func codeChunks(root string, in toolspec.CodeIndexIn) ([]codeChunk, *codeindex.WalkResult, error) {
	walk, err := codeindex.Walk(root, codeindex.WalkOptions{MaxFiles: in.MaxFiles, MaxFileBytes: int64(in.MaxFileBytes), Languages: in.Languages})
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	var out []codeChunk
	for _, f := range walk.Files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil {
			walk.Skipped++
			continue
		}
		for i, c := range codeindex.Split(f.Language, string(data), in.ChunkSize) {
			out = append(out, codeChunk{file: f, index: i, chunk: c})
		}
	}
	return out, walk, nil
}

func (t *Tools) codeIndex(ctx context.Context, in toolspec.CodeIndexIn) (toolspec.CodeIndexOut, *toolspec.Usage, error) {
	var none toolspec.CodeIndexOut
	start := time.Now()
	coll, err := t.collectionNamed(in.Collection)
	if err != nil {
		return none, nil, err
	}
	root, err := t.codeRoot(in.Path)
	if err != nil {
		return none, nil, err
	}
	chunks, walk, err := codeChunks(root, in)
	if err != nil {
		return none, nil, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return none, nil, err
	}
	db := t.databaseNamed(in.DB)
	model := in.Model
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = codeText(c) // the path and symbol are part of what is embedded: a question names them
	}
	ids := make([]string, len(chunks))
	for i, c := range chunks {
		ids[i] = mongostore.ChunkID(coll, root+"/"+c.file.Path, c.index, c.chunk.Text)
	}
	model, tokens, err := t.embedAndStore(ctx, store, db, coll, model, texts, func(i int) mongostore.Chunk {
		c := chunks[i]
		return mongostore.Chunk{ID: ids[i], Text: c.chunk.Text, Source: c.file.Path, ChunkIndex: c.index,
			Metadata: map[string]any{"path": c.file.Path, "language": c.file.Language, "startLine": c.chunk.StartLine, "endLine": c.chunk.EndLine,
				"symbol": c.chunk.Symbol, "kind": c.chunk.Kind, "root": root, "codeIndex": true}}
	})
	if err != nil {
		return none, nil, err
	}
	removed, err := store.Delete(ctx, db, coll, staleCodeChunks(root, in.Languages, walk, ids))
	if err != nil {
		return none, nil, fmt.Errorf("removing chunks of %s that changed or were deleted since it was last indexed (the new chunks are stored; index again): %w", root, err)
	}
	langs := map[string]int{}
	for _, f := range walk.Files {
		langs[f.Language]++
	}
	return toolspec.CodeIndexOut{Path: root, Collection: coll, DB: db, Model: model, Files: len(walk.Files), Chunks: len(chunks),
		Removed: int(removed), Skipped: walk.Skipped, Truncated: walk.Truncated, Languages: langs, DurationMs: time.Since(start).Milliseconds()}, &toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// staleCodeChunks selects what an earlier code_index of root stored that this one did not write
// (ids): chunks of files deleted since, and the old chunks of files changed since (a chunk's id
// holds its content). It stays within what this walk covered: the languages it was limited to,
// and when maxFiles cut it short, the files it reached (a file it did not reach may still exist).
func staleCodeChunks(root string, languages []string, walk *codeindex.WalkResult, ids []string) map[string]any {
	f := map[string]any{"metadata.codeIndex": true, "metadata.root": root, "_id": map[string]any{"$nin": ids}}
	if len(languages) > 0 {
		langs := make([]string, len(languages))
		for i, l := range languages {
			langs[i] = strings.ToLower(l)
		}
		f["metadata.language"] = map[string]any{"$in": langs}
	}
	if walk.Truncated {
		paths := make([]string, len(walk.Files))
		for i, file := range walk.Files {
			paths[i] = file.Path
		}
		f["source"] = map[string]any{"$in": paths}
	}
	return f
}

// codeText is what is embedded for a chunk: its path and symbol, then its code.
func codeText(c codeChunk) string {
	head := c.file.Path
	if c.chunk.Symbol != "" {
		head += " " + c.chunk.Symbol
	}
	return head + "\n" + c.chunk.Text
}

func (t *Tools) codeSearch(ctx context.Context, in toolspec.CodeSearchIn) (toolspec.CodeSearchOut, *toolspec.Usage, error) {
	filter, n := codeFilter(in.Language, in.PathPrefix, candidates(in.Limit))
	results, _, warnings, tokens, err := t.retrieve(ctx, in.Query, in.DB, in.Collection, in.Model, filter, n)
	if err != nil {
		return toolspec.CodeSearchOut{}, nil, err
	}
	hits := []toolspec.CodeHit{}
	for _, r := range results {
		if len(hits) == in.Limit {
			break
		}
		if h, ok := codeHit(r.Metadata, r.Content, r.Score, in.PathPrefix); ok {
			hits = append(hits, h)
		}
	}
	return toolspec.CodeSearchOut{Query: in.Query, Results: hits, Count: len(hits), Warnings: warnings}, &toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// codeFilter is the search filter of the code tools, and how many candidates to ask for: more
// when a path prefix is applied to them afterwards.
func codeFilter(language, pathPrefix string, n int) (map[string]any, int) {
	filter := map[string]any{"metadata.codeIndex": true}
	if language != "" {
		filter["metadata.language"] = strings.ToLower(language)
	}
	if pathPrefix != "" {
		n *= 4
	}
	return filter, n
}

// codeHit is a found chunk as the code tools answer it; ok is false when its path is outside
// pathPrefix.
func codeHit(m map[string]any, content string, score float64, pathPrefix string) (toolspec.CodeHit, bool) {
	path, _ := m["path"].(string)
	if pathPrefix != "" && !strings.HasPrefix(path, strings.TrimPrefix(pathPrefix, "./")) {
		return toolspec.CodeHit{}, false
	}
	lang, _ := m["language"].(string)
	sym, _ := m["symbol"].(string)
	kind, _ := m["kind"].(string)
	return toolspec.CodeHit{Path: path, Language: lang, StartLine: asInt(m["startLine"]), EndLine: asInt(m["endLine"]),
		Symbol: sym, Kind: kind, Content: content, Score: score}, true
}

// codeFindSimilar embeds the snippet as code_index embeds chunks (a document, with the
// collection's model) and keeps the nearest chunks at least threshold alike, by cosine alone: a
// snippet is compared with code, not read as a question, so keywords do not enter the score.
func (t *Tools) codeFindSimilar(ctx context.Context, in toolspec.CodeFindSimilarIn) (toolspec.CodeFindSimilarOut, *toolspec.Usage, error) {
	filter, n := codeFilter(in.Language, in.PathPrefix, in.Limit)
	near, err := t.nearest(ctx, in.Code, "document", in.DB, in.Collection, in.Model, filter, n)
	var usage *toolspec.Usage
	if near.tokens > 0 || err == nil {
		usage = &toolspec.Usage{EmbeddingTokens: near.tokens}
	}
	if err != nil {
		return toolspec.CodeFindSimilarOut{}, usage, err
	}
	out := toolspec.CodeFindSimilarOut{Results: []toolspec.CodeHit{}, Warnings: near.warnings}
	for _, h := range near.hits {
		if len(out.Results) == in.Limit {
			break
		}
		sim := similarity(near.path, h.Score)
		if sim < in.Threshold {
			continue
		}
		if hit, ok := codeHit(h.Metadata, h.Content, sim, in.PathPrefix); ok {
			out.Results = append(out.Results, hit)
		}
	}
	out.Count = len(out.Results)
	return out, usage, nil
}

func (t *Tools) codeStatus(ctx context.Context, in toolspec.CodeStatusIn) (toolspec.CodeStatusOut, *toolspec.Usage, error) {
	coll, err := t.collectionNamed(in.Collection)
	if err != nil {
		return toolspec.CodeStatusOut{}, nil, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return toolspec.CodeStatusOut{}, nil, err
	}
	db := t.databaseNamed(in.DB)
	groups, err := store.Aggregate(ctx, db, coll, []any{
		map[string]any{"$match": map[string]any{"metadata.codeIndex": true}},
		map[string]any{"$group": map[string]any{"_id": map[string]any{"lang": "$metadata.language", "path": "$source", "root": "$metadata.root"}, "n": map[string]any{"$sum": 1}}},
	}, 1_000_000)
	if err != nil {
		return toolspec.CodeStatusOut{}, nil, &InputError{Msg: err.Error()}
	}
	out := toolspec.CodeStatusOut{Collection: coll, DB: db, Languages: map[string]int{}, Roots: []string{}}
	roots := map[string]bool{}
	for _, g := range groups {
		m, _ := g.(map[string]any)
		id, _ := m["_id"].(map[string]any)
		lang, _ := id["lang"].(string)
		n := asInt(m["n"])
		out.Languages[lang] += n
		out.Chunks += n
		out.Files++
		if r, _ := id["root"].(string); r != "" && !roots[r] {
			roots[r] = true
			out.Roots = append(out.Roots, r)
		}
	}
	sort.Strings(out.Roots)
	return out, nil, nil
}

// asInt reads a number decoded from JSON or BSON.
func asInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int32:
		return int(n)
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// codeRoot resolves the directory a code_index step names and refuses it unless it is inside a
// directory the operator allows (WEFT_CODE_ROOTS): the path comes from a file's author, a client
// or a model, and the worker's files are not theirs to read. Links are resolved first, so a link
// inside an allowed directory cannot lead out of it.
func (t *Tools) codeRoot(path string) (string, error) {
	if len(t.cfg.CodeRoots) == 0 {
		return "", &ConfigError{Msg: "code_index reads only directories the operator allows, and none are: set WEFT_CODE_ROOTS on the worker to the directories it may index (comma-separated)"}
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", &InputError{Msg: fmt.Sprintf("path %q: %v", path, err)}
	}
	for _, r := range t.cfg.CodeRoots {
		ra, err := filepath.Abs(r)
		if err == nil {
			ra, err = filepath.EvalSymlinks(ra)
		}
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ra, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return abs, nil
		}
	}
	return "", &InputError{Msg: fmt.Sprintf("path %q is outside the directories code_index may read (WEFT_CODE_ROOTS): index a directory under one of them, or ask the operator to add it", path)}
}
