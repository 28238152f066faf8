package vaipkg

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// MaxSearchSize bounds a registry's answer to one search.
const MaxSearchSize = 8 << 20

// MaxSearchResults is the most results Search asks a registry for (npm's search returns at most
// 250 a request).
const MaxSearchResults = 250

// SearchResult is one workflow package a registry search found.
type SearchResult struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Tier        string   `json:"tier"`
	Description string   `json:"description,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	Date        string   `json:"date,omitempty"`
	Publisher   string   `json:"publisher,omitempty"`
}

type searchAnswer struct {
	Objects []struct {
		Package struct {
			Name        string `json:"name"`
			Version     string `json:"version"`
			Description string `json:"description"`
			Keywords    any    `json:"keywords"`
			Date        string `json:"date"`
			Publisher   struct {
				Username string `json:"username"`
			} `json:"publisher"`
		} `json:"package"`
	} `json:"objects"`
}

// Search asks the registry's search endpoint (npm's /-/v1/search) for workflow packages matching
// query: once for vai's official scope (scope:vaicli) and once for community packages (text
// vai-workflow), each up to limit results. Only packages named as vai names them (@vaicli/* or
// vai-workflow-*) are returned, each once, official ones first, then in the registry's order, at
// most limit. Their text is cleaned as package.json's is (Line, Paragraphs): it is the package
// authors'. An empty query lists what the registry has.
func (r Registry) Search(ctx context.Context, query string, limit int) ([]SearchResult, error) {
	if limit <= 0 || limit > MaxSearchResults {
		limit = MaxSearchResults
	}
	query = strings.Join(strings.Fields(query), " ")
	base := strings.TrimRight(r.URL, "/")
	var out []SearchResult
	seen := map[string]bool{}
	for _, text := range []string{"scope:" + strings.Trim(OfficialScope, "@/"), "vai-workflow"} {
		if query != "" {
			text += " " + query
		}
		u := base + "/-/v1/search?text=" + url.QueryEscape(text) + "&size=" + strconv.Itoa(limit)
		data, err := r.get(ctx, u, MaxSearchSize, "application/json")
		if err != nil {
			return nil, fmt.Errorf("searching %s (WEFT_NPM_REGISTRY or npm_config_registry set another registry): %w", base, err)
		}
		var a searchAnswer
		if err := json.Unmarshal(data, &a); err != nil {
			return nil, fmt.Errorf("searching %s: the answer is not an npm search result (objects[].package): %w", base, err)
		}
		for _, o := range a.Objects {
			p := o.Package
			if seen[p.Name] || CheckName(p.Name) != nil || !VaiNamed(p.Name) {
				continue
			}
			seen[p.Name] = true
			version := p.Version
			if checkVersion(version) != nil {
				version = "?"
			}
			out = append(out, SearchResult{Name: p.Name, Version: version, Tier: Tier(p.Name),
				Description: Paragraphs(p.Description), Keywords: lines(strings_(p.Keywords)),
				Date: Line(p.Date), Publisher: Line(p.Publisher.Username)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Tier == TierOfficial && out[j].Tier != TierOfficial })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
