package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/codeindex"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/rank"
	"github.com/weftworks/weft/activities/toolspec"
)

func init() {
	bind(toolspec.CodeIndex, (*Tools).codeIndex)
	bind(toolspec.CodeSearch, (*Tools).codeSearch)
	bind(toolspec.CodeQuery, (*Tools).codeQuery)
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
// Every file is listed and opened relative to root (os.Root), and judged as opened: a file
// swapped for a link out of root after the walk listed it is skipped, never read.
func codeChunks(root string, in toolspec.CodeIndexIn) ([]codeChunk, *codeindex.WalkResult, error) {
	r, err := codeindex.OpenRoot(root)
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	defer r.Close()
	walk, err := codeindex.WalkRoot(r, codeindex.WalkOptions{MaxFiles: in.MaxFiles, MaxFileBytes: int64(in.MaxFileBytes), Languages: in.Languages})
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	var out []codeChunk
	for _, f := range walk.Files {
		data, err := codeindex.ReadFile(r, f, int64(in.MaxFileBytes))
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
	root, chunks, walk, err := t.codeSource(ctx, in)
	if err != nil {
		return none, nil, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return none, nil, err
	}
	db := t.databaseNamed(in.DB)
	model, err := t.codeModel(ctx, store, db, coll, in.Model)
	if err != nil {
		return none, nil, err
	}
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

// vaiRepo is the repository vai's code_index source names, if it names one: as vai's
// isGitHubUrl, a source with github.com in it or of the form owner/repo is a GitHub repository
// (https://github.com/owner/repo), but ./dir and ../dir are directories; any other URL (which vai would fail to read as a directory) is
// the repository at that URL. Anything else is a directory.
func vaiRepo(source string) (string, bool) {
	s := strings.TrimSpace(source)
	if strings.Contains(s, "://") {
		return s, true
	}
	if i := strings.Index(s, "github.com"); i >= 0 {
		rest := strings.TrimLeft(s[i+len("github.com"):], "/:")
		return "https://github.com/" + rest, true
	}
	if vaiShorthand.MatchString(s) && !strings.HasPrefix(s, "./") && !strings.HasPrefix(s, "../") { // ./src is a directory
		return "https://github.com/" + s, true
	}
	return "", false
}

// vaiShorthand is vai's owner/repo shorthand (src/lib/github.js isGitHubUrl).
var vaiShorthand = regexp.MustCompile(`^[a-zA-Z0-9_.-]+/[a-zA-Z0-9_.-]+$`)

// codeSource reads what a code_index step names: a directory under WEFT_CODE_ROOTS, or a Git
// repository cloned for the walk and removed after it (codegit.go). root is what the chunks are
// stored under: the directory, or the repository's URL and ref.
func (t *Tools) codeSource(ctx context.Context, in toolspec.CodeIndexIn) (string, []codeChunk, *codeindex.WalkResult, error) {
	if in.Source != "" {
		if in.Path != "" || in.Repo != "" {
			return "", nil, nil, &InputError{Msg: "code_index takes source (vai's name), path or repo, not both: remove one"}
		}
		if repo, ok := vaiRepo(in.Source); ok {
			in.Repo = repo
		} else {
			in.Path, in.Ref = in.Source, "" // vai reads branch only for a GitHub source
		}
	}
	switch {
	case in.Path != "" && in.Repo != "":
		return "", nil, nil, &InputError{Msg: "code_index takes path (a directory on the worker) or repo (a Git repository's URL), not both: remove one"}
	case in.Repo != "":
		repo, err := t.codeGitRepo(in.Repo, in.Ref)
		if err != nil {
			return "", nil, nil, err
		}
		dir, skipped, cleanup, err := t.cloneCodeRepo(ctx, repo, int64(in.MaxFileBytes))
		if err != nil {
			return "", nil, nil, err
		}
		defer cleanup()
		chunks, walk, err := codeChunks(dir, in)
		if err != nil {
			return "", nil, nil, err
		}
		walk.Skipped += skipped
		return repo.root(), chunks, walk, nil
	case in.Ref != "":
		return "", nil, nil, &InputError{Msg: "ref names a branch or tag of repo, and no repo is given: add repo, or remove ref"}
	case in.Path == "":
		return "", nil, nil, &InputError{Msg: "code_index needs path (a directory on the worker, under WEFT_CODE_ROOTS) or repo (a Git repository's https URL)"}
	}
	if strings.Contains(in.Path, "://") {
		return "", nil, nil, &InputError{Msg: fmt.Sprintf("path %q is a URL: give a Git repository's URL as repo, not path", redactURL(in.Path))}
	}
	root, err := t.codeRoot(in.Path)
	if err != nil {
		return "", nil, nil, err
	}
	chunks, walk, err := codeChunks(root, in)
	return root, chunks, walk, err
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

// codeModel is the embedding model of a code tool: the one its step names, else the one the
// collection was indexed with (a search must embed as the chunks were), else defaultCodeModel.
func (t *Tools) codeModel(ctx context.Context, store *mongostore.Store, db, coll, model string) (string, error) {
	if model != "" {
		return model, nil
	}
	model, err := store.CollectionModel(ctx, db, coll)
	if err != nil || model != "" {
		return model, err
	}
	return t.defaultCodeModel(), nil
}

// defaultCodeModel is the model code is embedded with when neither the step nor the collection
// names one: voyage-code-3 (Voyage's model for code) when the embedding provider in use is Voyage,
// otherwise the default of every tool.
func (t *Tools) defaultCodeModel() string {
	m := t.defaultEmbeddingModel()
	if strings.HasPrefix(m, "voyage-") {
		return "voyage-code-3"
	}
	return m
}

// codeSearchModel is codeModel for a search, which names its collection by the step's inputs.
func (t *Tools) codeSearchModel(ctx context.Context, dbName, collection, model string) (string, error) {
	if model != "" {
		return model, nil
	}
	coll, err := t.collectionNamed(collection)
	if err != nil {
		return "", err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return "", err
	}
	return t.codeModel(ctx, store, t.databaseNamed(dbName), coll, "")
}

// codeRetrieval is what code_search and code_query do, each with its own defaults: how many
// candidates the vector search finds for limit results, and whether they are reranked.
type codeRetrieval struct {
	query, db, collection, language, pathPrefix, model string
	rerankModel                                        string // "": rerank-2.5
	filter                                             map[string]any
	limit, candidates                                  int
	rerank                                             bool
}

func (t *Tools) codeSearch(ctx context.Context, in toolspec.CodeSearchIn) (toolspec.CodeSearchOut, *toolspec.Usage, error) {
	return t.codeRetrieve(ctx, codeRetrieval{query: in.Query, db: in.DB, collection: in.Collection, language: in.Language, pathPrefix: in.PathPrefix,
		model: in.Model, filter: in.Filter, limit: in.Limit, candidates: candidates(in.Limit), rerank: in.Rerank, rerankModel: in.RerankModel})
}

// codeQuery is vai's code_query: code_search over five times as many candidates as results
// (more than code_search ranks), always reranked.
func (t *Tools) codeQuery(ctx context.Context, in toolspec.CodeQueryIn) (toolspec.CodeSearchOut, *toolspec.Usage, error) {
	return t.codeRetrieve(ctx, codeRetrieval{query: in.Query, db: in.DB, collection: in.Collection, language: in.Language, pathPrefix: in.PathPrefix,
		model: in.Model, filter: in.Filter, limit: in.Limit, candidates: codeQueryCandidates(in.Limit), rerank: true, rerankModel: in.RerankModel})
}

// codeQueryCandidates is how many candidates code_query reranks for limit results: five times
// limit, and always more than code_search ranks (candidates).
func codeQueryCandidates(limit int) int { return max(limit*5, 25) }

// codeRetrieve searches code chunks by hybrid ranking and, when asked, reranks the candidates
// as query does: with Voyage's reranker when a key is configured; offline the reranker would be
// the fusion search already ranked by, so the results keep their order.
func (t *Tools) codeRetrieve(ctx context.Context, r codeRetrieval) (toolspec.CodeSearchOut, *toolspec.Usage, error) {
	var none toolspec.CodeSearchOut
	filter, n, err := codeFilter(r.language, r.pathPrefix, r.filter, r.candidates)
	if err != nil {
		return none, nil, err
	}
	model, err := t.codeSearchModel(ctx, r.db, r.collection, r.model)
	if err != nil {
		return none, nil, err
	}
	results, _, warnings, tokens, err := t.retrieve(ctx, r.query, r.db, r.collection, model, filter, n)
	if err != nil {
		return none, nil, err
	}
	keep := r.limit
	if r.rerank {
		keep = r.candidates // the reranker reads every candidate
	}
	hits := []toolspec.CodeHit{}
	for _, d := range results {
		if len(hits) == keep {
			break
		}
		if h, ok := codeHit(d.Metadata, d.Content, d.Score, r.pathPrefix); ok {
			hits = append(hits, h)
		}
	}
	out := toolspec.CodeSearchOut{Query: r.query, Warnings: warnings}
	usage := &toolspec.Usage{EmbeddingTokens: tokens}
	switch {
	case r.rerank && len(hits) > 0 && t.voyage != nil:
		texts, names := make([]string, len(hits)), make([]string, len(hits))
		for i, h := range hits {
			texts[i], names[i] = rerankText(h), h.Path
		}
		ranking, err := t.rankTexts(ctx, r.query, texts, names, r.rerankModel, r.limit)
		if err != nil {
			return none, usage, err
		}
		ranked := make([]toolspec.CodeHit, 0, len(ranking.Results))
		for _, rk := range ranking.Results {
			h := hits[rk.Index]
			h.RerankedScore = &rk.Score
			ranked = append(ranked, h)
		}
		sort.SliceStable(ranked, func(i, j int) bool { return *ranked[i].RerankedScore > *ranked[j].RerankedScore })
		hits, out.RerankModel = ranked, ranking.Model
		usage.TotalTokens += ranking.Tokens
	case r.rerank && len(hits) > 0:
		for i := range hits {
			score := hits[i].Score
			hits[i].RerankedScore = &score
		}
		out.RerankModel = rank.Model
	}
	if len(hits) > r.limit {
		hits = hits[:r.limit]
	}
	out.Results, out.Count = hits, len(hits)
	return out, usage, nil
}

// rerankText is what the reranker reads for a chunk: what was embedded for it, its path and
// symbol before its code.
func rerankText(h toolspec.CodeHit) string {
	head := h.Path
	if h.Symbol != "" {
		head += " " + h.Symbol
	}
	return head + "\n" + h.Content
}

// codeFilterFields are the chunk metadata a code tool's filter may name (vai's names too), and
// where code_index stores each.
var codeFilterFields = map[string]string{
	"language": "metadata.language", "path": "metadata.path", "source": "source", "symbol": "metadata.symbol", "symbols": "metadata.symbol",
	"kind": "metadata.kind", "chunkType": "metadata.kind", "startLine": "metadata.startLine", "endLine": "metadata.endLine", "root": "metadata.root",
}

// codeFilter is the search filter of the code tools, and how many candidates to ask for: more
// when a path prefix is applied to them afterwards. A step's filter (vai's free-form filter) is
// merged in, but only on the metadata code_index writes and only with values or $in lists: it
// narrows the search among code chunks and cannot reach anything else (the collection is the
// step's, and metadata.codeIndex stays required).
func codeFilter(language, pathPrefix string, extra map[string]any, n int) (map[string]any, int, error) {
	filter := map[string]any{"metadata.codeIndex": true}
	if language != "" {
		filter["metadata.language"] = strings.ToLower(language)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var and []any
	for _, k := range keys {
		field, ok := codeFilterFields[strings.TrimPrefix(k, "metadata.")]
		if !ok || (strings.HasPrefix(k, "metadata.") && !strings.HasPrefix(field, "metadata.")) {
			return nil, 0, &InputError{Msg: fmt.Sprintf("filter field %q is not chunk metadata code_index writes: filter on %s", k, strings.Join(codeFilterNames(), ", "))}
		}
		v, err := codeFilterValue(k, extra[k], field == "metadata.language")
		if err != nil {
			return nil, 0, err
		}
		if _, taken := filter[field]; taken {
			and = append(and, map[string]any{field: v}) // language given twice: both must hold
			continue
		}
		filter[field] = v
	}
	if len(and) > 0 {
		filter["$and"] = and
	}
	if pathPrefix != "" {
		n *= 4
	}
	return filter, n, nil
}

// codeFilterNames are the fields a code tool's filter may name, sorted.
func codeFilterNames() []string {
	names := make([]string, 0, len(codeFilterFields))
	for k := range codeFilterFields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// codeFilterValue checks the value a filter gives a field: a string, number or boolean, or
// {"$in": [such values]}; language values are lowercased as code_index stores them.
func codeFilterValue(field string, v any, lower bool) (any, error) {
	scalar := func(x any) (any, bool) {
		switch s := x.(type) {
		case string:
			if lower {
				return strings.ToLower(s), true
			}
			return s, true
		case bool, float64, float32, int, int32, int64:
			return s, true
		}
		return nil, false
	}
	if x, ok := scalar(v); ok {
		return x, nil
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		if list, ok := m["$in"].([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				x, ok := scalar(e)
				if !ok {
					return nil, &InputError{Msg: fmt.Sprintf("filter.%s: $in[%d] is %s, not a string, number or boolean", field, i, filterValueKind(e))}
				}
				out[i] = x
			}
			return map[string]any{"$in": out}, nil
		}
	}
	return nil, &InputError{Msg: fmt.Sprintf(`filter.%s: %s is not a string, number, boolean or {"$in": [...]} (the only operator a code filter takes)`, field, filterValueKind(v))}
}

// filterValueKind names a value's JSON kind for an error (never "<nil>"): its operators when it
// is an object.
func filterValueKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "an object with " + strings.Join(keys, ", ")
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
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
	filter, n, err := codeFilter(in.Language, in.PathPrefix, in.Filter, in.Limit)
	if err != nil {
		return toolspec.CodeFindSimilarOut{}, nil, err
	}
	model, err := t.codeSearchModel(ctx, in.DB, in.Collection, in.Model)
	if err != nil {
		return toolspec.CodeFindSimilarOut{}, nil, err
	}
	near, err := t.nearest(ctx, in.Code, "document", in.DB, in.Collection, model, filter, n)
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

// codeCitation is how a code tool's result is cited in an LLM's context: path:start-end and its
// symbol, from the result's fields (path alone when it has no lines).
func codeCitation(path string, hit map[string]any) string {
	out := path
	if start, end := asInt(hit["startLine"]), asInt(hit["endLine"]); start > 0 {
		out += fmt.Sprintf(":%d", start)
		if end > start {
			out += fmt.Sprintf("-%d", end)
		}
	}
	if sym, _ := hit["symbol"].(string); sym != "" {
		out += " (" + sym + ")"
	}
	return out
}
