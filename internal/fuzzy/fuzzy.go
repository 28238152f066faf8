package fuzzy

import "strings"

// Distance counts the insertions, deletions, substitutions and swaps of neighbouring characters
// that turn a into b (optimal string alignment; a swap is the commonest typo: qurey for query).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Nearest is the candidate closest to s, ignoring case, when it is close enough to be a typo (at
// most a third of s's length, at least one edit) or differs from s in case only; "" otherwise.
// Ties go to the candidate that sorts first.
func Nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range candidates {
		if d := Distance(ls, strings.ToLower(c)); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	switch {
	case best == "":
		return ""
	case bestD == 0:
		if best != s {
			return best // differs in case only
		}
		return ""
	case bestD <= max(1, len([]rune(s))/3):
		return best
	}
	return ""
}
