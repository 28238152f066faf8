package rank

// ForgetAnalyses empties the analysis cache, so that the next Fuse analyses every text.
func ForgetAnalyses() {
	analyses.mu.Lock()
	defer analyses.mu.Unlock()
	analyses.cur, analyses.old, analyses.size = nil, nil, 0
}
