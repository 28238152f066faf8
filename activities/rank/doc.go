// Package rank is weft's offline ranking, used by search and query (hybrid retrieval) and by rerank
// when no Voyage key is configured: BM25 scored as a bleve index of the candidates would score it
// (bleve's English analyzer with stemming, statistics over the candidate set, on each candidate's
// text and on the words of its source name), computed from the analyzer's tokens without building
// an index (the analyses of recent texts are remembered, since a search ranks the chunks of the
// same collection again and again), blended with the candidates' vector similarity into one
// relevance score in [0,1].
//
// Entry points: Fuse (scores candidates), Ranked and Order (best first), BM25 and TitleWords; Model
// names the ranking in results.
//
// It does no I/O and must not import Temporal (go.temporal.io), workflows/ or the activities
// package.
package rank
