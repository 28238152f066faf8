package toolspec

import (
	"errors"
	"net/url"
	"strings"
	"time"
)

// CodeIndex indexes a local source tree into a collection.
var CodeIndex = Declare[CodeIndexIn, CodeIndexOut](&Spec{
	MCP:  true,
	Name: "code_index", Domain: "code", Kind: KindActivity, NeedsCollection: true,
	Title: "Index a source tree",
	Description: "Walk a local directory on the worker, or a shallow clone of a Git repository fetched over https from a host the operator allows (repo, optionally at ref; " +
		"the clone is bounded in size and time and removed afterwards), honouring .gitignore files (binary and large files skipped); detect each file's language, " +
		"split it at function, class and type boundaries (Go, JavaScript, TypeScript, Python, Java, Rust, Ruby, C, C++; line windows otherwise) " +
		"and embed and upsert the chunks with their path, language, line numbers and symbol as metadata. Chunk ids derive from the path and content, so re-indexing overwrites, " +
		"and chunks of files deleted or changed since the directory (or the repository at that ref) was last indexed are removed. Unchanged chunks cost no provider request (the embedding cache).",
	Timeout:     30 * time.Minute,
	Heartbeat:   30 * time.Second,
	Annotations: Annotations{Idempotent: true},
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, DatabaseWrite: 1} },
	// vai's names (src/mcp/tools/code-search.js handleCodeIndex)
	Aliases: map[string]string{"branch": "ref", "maxFileSize": "maxFileBytes"},
})

// CodeIndexIn is code_index's input.
type CodeIndexIn struct {
	Path         string   `json:"path,omitempty" weft:"minLength=1,maxLength=4096" jsonschema:"Directory on the worker to index (under WEFT_CODE_ROOTS); give path or repo"`
	Repo         string   `json:"repo,omitempty" weft:"minLength=1,maxLength=2048" jsonschema:"Git repository to clone and index instead of a directory: an https URL on a host the operator allows (WEFT_CODE_GIT_HOSTS)"`
	Source       string   `json:"source,omitempty" weft:"minLength=1,maxLength=4096" jsonschema:"vai's name: a directory (as path) or a repository (as repo) when it is a URL or, as in vai, names github.com or is owner/repo (https://github.com/owner/repo); give source, path or repo"`
	Ref          string   `json:"ref,omitempty" weft:"minLength=1,maxLength=255" jsonschema:"Branch or tag of repo to index (default: the repository's HEAD)"`
	DB           string   `json:"db,omitempty"`
	Collection   string   `json:"collection,omitempty"`
	Model        string   `json:"model,omitempty" jsonschema:"Embedding model (default: the collection's, else voyage-code-3 when the embedding provider is Voyage, else the configured default)"`
	Languages    []string `json:"languages,omitempty" jsonschema:"Index only these languages (go, python, typescript, ...)"`
	MaxFiles     int      `json:"maxFiles,omitempty" weft:"min=1,max=100000,default=5000"`
	MaxFileBytes int      `json:"maxFileBytes,omitempty" weft:"min=1,max=10485760,default=1048576"`
	ChunkSize    int      `json:"chunkSize,omitempty" weft:"min=200,max=8000,default=1500" jsonschema:"Largest chunk, in characters"`
}

// CodeIndexOut is code_index's output.
type CodeIndexOut struct {
	Path       string         `json:"path" jsonschema:"The directory indexed, or the repository's URL (followed by #ref when a ref was given; the URL without a trailing / or .git, or its scheme's default port): the chunks' root"`
	Collection string         `json:"collection"`
	DB         string         `json:"db"`
	Model      string         `json:"model"`
	Files      int            `json:"files" jsonschema:"Files indexed"`
	Chunks     int            `json:"chunks" jsonschema:"Chunks written"`
	Removed    int            `json:"removed" jsonschema:"Chunks removed: those of files deleted or changed since the directory was last indexed"`
	Skipped    int            `json:"skipped" jsonschema:"Files left out: ignored, binary, too large or in no known language"`
	Truncated  bool           `json:"truncated" jsonschema:"maxFiles stopped the walk"`
	Languages  map[string]int `json:"languages" jsonschema:"Files per language"`
	DurationMs int64          `json:"durationMs"`
}

// CodeSearch searches an indexed source tree.
var CodeSearch = Declare[CodeSearchIn, CodeSearchOut](&Spec{
	MCP:  true,
	Name: "code_search", Domain: "code", Kind: KindActivity, NeedsCollection: true,
	Title:       "Search code",
	Description: "Search a collection code_index filled: hybrid search (vector and keyword) over the chunks, optionally of one language, under one path prefix or matching a metadata filter, optionally reranked. Each result names its file, lines and symbol.",
	Annotations: readOnlyOpen,
	Calls: func(in map[string]any) Calls {
		c := Calls{Embed: 1, VectorSearch: 1}
		if boolInput(in, "rerank", false) {
			c.Rerank = 1
		}
		return c
	},
})

// CodeSearchIn is code_search's input.
type CodeSearchIn struct {
	Query       string         `json:"query" weft:"content,minLength=1,maxLength=5000"`
	DB          string         `json:"db,omitempty"`
	Collection  string         `json:"collection,omitempty"`
	Language    string         `json:"language,omitempty" jsonschema:"Only chunks of this language (go, python, typescript, ...)"`
	PathPrefix  string         `json:"pathPrefix,omitempty" jsonschema:"Only files under this path (activities/)"`
	Filter      map[string]any `json:"filter,omitempty" jsonschema:"Chunk metadata to match, merged into the search filter: field to a string, number, boolean or {\"$in\": [...]}; fields: language, path, source, symbol, kind (chunkType), startLine, endLine, root"`
	Limit       int            `json:"limit,omitempty" weft:"min=1,max=100,default=10"`
	Model       string         `json:"model,omitempty" jsonschema:"Embedding model (default: the one the collection was indexed with, else as code_index's)"`
	Rerank      bool           `json:"rerank,omitempty" jsonschema:"Rerank the candidates with Voyage's reranker when a key is configured (offline, results keep search's order)"`
	RerankModel string         `json:"rerankModel,omitempty" weft:"minLength=1" jsonschema:"Voyage's reranker model (default rerank-2.5, as vai's); offline the local reranker ranks"`
}

// CodeQuery is vai's full RAG query over an indexed source tree: code_search with more
// candidates, always reranked, five results by default.
var CodeQuery = Declare[CodeQueryIn, CodeSearchOut](&Spec{
	MCP:  true,
	Name: "code_query", Domain: "code", Kind: KindActivity, NeedsCollection: true,
	Title: "Ask about code",
	Description: "Answer a question from a collection code_index filled: code_search over five times as many candidates as results, always reranked (Voyage's reranker when a key is configured; offline, search's order), " +
		"optionally of one language, under one path prefix or matching a metadata filter. Each result names its file, lines and symbol: the context an llm step cites.",
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1, Rerank: 1} },
})

// CodeQueryIn is code_query's input: code_search's, without the choice to rerank.
type CodeQueryIn struct {
	Query       string         `json:"query" weft:"content,minLength=1,maxLength=5000"`
	DB          string         `json:"db,omitempty"`
	Collection  string         `json:"collection,omitempty"`
	Language    string         `json:"language,omitempty" jsonschema:"Only chunks of this language (go, python, typescript, ...)"`
	PathPrefix  string         `json:"pathPrefix,omitempty" jsonschema:"Only files under this path (activities/)"`
	Filter      map[string]any `json:"filter,omitempty" jsonschema:"Chunk metadata to match, merged into the search filter: field to a string, number, boolean or {\"$in\": [...]}; fields: language, path, source, symbol, kind (chunkType), startLine, endLine, root"`
	Limit       int            `json:"limit,omitempty" weft:"min=1,max=50,default=5"`
	Model       string         `json:"model,omitempty" jsonschema:"Embedding model (default: the one the collection was indexed with, else as code_index's)"`
	RerankModel string         `json:"rerankModel,omitempty" weft:"minLength=1" jsonschema:"Voyage's reranker model (default rerank-2.5, as vai's); offline the local reranker ranks"`
}

// CodeSearchOut is code_search's output.
type CodeSearchOut struct {
	Query       string    `json:"query"`
	Results     []CodeHit `json:"results" jsonschema:"Best first" weft:"content"`
	Count       int       `json:"count"`
	RerankModel string    `json:"rerankModel,omitempty" jsonschema:"The reranker that ordered the results (absent: they were not reranked)"`
	Warnings    []string  `json:"warnings,omitempty"`
}

// CodeHit is one chunk code_search found.
type CodeHit struct {
	Path          string   `json:"path"`
	Language      string   `json:"language"`
	StartLine     int      `json:"startLine"`
	EndLine       int      `json:"endLine"`
	Symbol        string   `json:"symbol"`
	Kind          string   `json:"kind"`
	Content       string   `json:"content"`
	Score         float64  `json:"score" jsonschema:"Relevance in [0,1], as search scores"`
	RerankedScore *float64 `json:"rerankedScore,omitempty" jsonschema:"The reranker's relevance in [0,1], when the results were reranked (offline it equals score)"`
}

// CodeFindSimilar finds indexed code like a snippet.
var CodeFindSimilar = Declare[CodeFindSimilarIn, CodeFindSimilarOut](&Spec{
	MCP:  true,
	Name: "code_find_similar", Domain: "code", Kind: KindActivity, NeedsCollection: true,
	Title: "Find similar code",
	Description: "Given a code snippet, return the chunks of a collection code_index filled that are most like it (cosine similarity of their embeddings, " +
		"at least threshold), optionally of one language, under one path prefix or matching a metadata filter: other implementations of the same thing, copies to merge, the code a fragment came from.",
	Annotations: readOnlyOpen,
	Calls:       func(map[string]any) Calls { return Calls{Embed: 1, VectorSearch: 1} },
})

// CodeFindSimilarIn is code_find_similar's input.
type CodeFindSimilarIn struct {
	Code       string         `json:"code" weft:"content,minLength=1,maxLength=10000" jsonschema:"Code snippet to find similar implementations for"`
	DB         string         `json:"db,omitempty"`
	Collection string         `json:"collection,omitempty"`
	Language   string         `json:"language,omitempty" jsonschema:"Only chunks of this language (go, python, typescript, ...)"`
	PathPrefix string         `json:"pathPrefix,omitempty" jsonschema:"Only files under this path (activities/)"`
	Filter     map[string]any `json:"filter,omitempty" jsonschema:"Chunk metadata to match, merged into the search filter: field to a string, number, boolean or {\"$in\": [...]}; fields: language, path, source, symbol, kind (chunkType), startLine, endLine, root"`
	Limit      int            `json:"limit,omitempty" weft:"min=1,max=50,default=10"`
	Threshold  float64        `json:"threshold,omitempty" weft:"min=0,max=1,default=0.5" jsonschema:"Least cosine similarity a result has"`
	Model      string         `json:"model,omitempty" jsonschema:"Embedding model (default: the one the collection was indexed with, else as code_index's)"`
}

// CodeFindSimilarOut is code_find_similar's output; each result's score is its cosine similarity
// to the snippet.
type CodeFindSimilarOut struct {
	Results  []CodeHit `json:"results" jsonschema:"Most similar first" weft:"content"`
	Count    int       `json:"count"`
	Warnings []string  `json:"warnings,omitempty"`
}

// CodeStatus says what a code collection holds.
var CodeStatus = Declare[CodeStatusIn, CodeStatusOut](&Spec{
	MCP:  true,
	Name: "code_status", Domain: "code", Kind: KindActivity, NeedsCollection: true,
	Title:       "Code index status",
	Description: "What a collection code_index filled holds: chunks and files per language, and the directories and repositories indexed.",
	Annotations: readOnlyClosed,
	Calls:       func(map[string]any) Calls { return Calls{DatabaseRead: 1} },
})

// CodeStatusIn is code_status's input.
type CodeStatusIn struct {
	DB         string `json:"db,omitempty"`
	Collection string `json:"collection,omitempty"`
}

// CodeStatusOut is code_status's output.
type CodeStatusOut struct {
	Collection string         `json:"collection"`
	DB         string         `json:"db"`
	Chunks     int            `json:"chunks"`
	Files      int            `json:"files"`
	Languages  map[string]int `json:"languages" jsonschema:"Chunks per language"`
	Roots      []string       `json:"roots" jsonschema:"Directories and repositories (URL, #ref when one was given) indexed"`
}

// RepoFormError is what is wrong with the form of a code_index repo, and what to write instead.
type RepoFormError struct{ Why, Fix string }

func (e *RepoFormError) Error() string { return e.Why + ": " + e.Fix }

// CodeRepoURL checks the form of a code_index repo: what the worker refuses whatever its
// settings, so validation (workflows/dsl) refuses it before the run with the same words. It must
// be an http or https URL with a host and no user info, query or fragment (file, ssh and git
// URLs, scp-style addresses and local paths are refused). Which hosts, ports and plain http the
// worker allows are its settings' to say (WEFT_CODE_GIT_HOSTS). A URL that does not parse is
// not repeated (it may hold credentials): only the parse error's reason is.
func CodeRepoURL(raw string) (*url.URL, error) {
	const write = "write https://host/owner/repo"
	u, err := url.Parse(raw)
	if err != nil {
		why := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			why = ue.Err.Error()
		}
		if strings.Contains(why, "first path segment in URL cannot contain colon") {
			return nil, &RepoFormError{"is not an https URL (local paths and scp-style addresses like git@host:owner/repo are refused)", write}
		}
		return nil, &RepoFormError{"is not a valid URL (" + why + ")", write}
	}
	switch {
	case u.Scheme != "" && u.Scheme != "https" && u.Scheme != "http":
		return nil, &RepoFormError{"scheme " + u.Scheme + " is refused: code_index clones over https only (file, ssh and git are never used)", write}
	case u.Scheme == "" || u.Host == "":
		return nil, &RepoFormError{"is not an https URL (local paths and scp-style addresses like git@host:owner/repo are refused)", write}
	case u.User != nil:
		return nil, &RepoFormError{"holds credentials: credentials in the URL are refused, since code_index clones public repositories and sends none", "remove the user and password from the URL"}
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, &RepoFormError{"holds a query or fragment: a query or fragment is refused", "give the repository's URL, and its branch or tag as ref"}
	}
	return u, nil
}
