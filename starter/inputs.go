package starter

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/weftworks/weft/workflows/dsl"
)

// MaxInputFileBytes caps --input-file and --input name=@file. A run's inputs travel in its
// start request, which Temporal caps at 2 MB: keep large data in the knowledge store.
const MaxInputFileBytes = 4 << 20

// readInputFile reads a bounded file, refusing an oversized one before reading it.
func readInputFile(flag, path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: %s is a directory", flag, path)
	}
	if st.Size() > MaxInputFileBytes {
		return nil, fmt.Errorf("%s: %s is %.1f MB, over the %d MB weft accepts as inputs (Temporal keeps a run's inputs in its history, 2 MB at most): ingest large data into a collection and pass its name",
			flag, path, float64(st.Size())/(1<<20), MaxInputFileBytes>>20)
	}
	return os.ReadFile(path)
}

// inputsFromFlags reads --input-file (a JSON object) and --input name=value flags, where a value
// written @path is read from that file. Flags win over the file.
func (f *runFlags) inputsFromFlags() (map[string]string, map[string]any, error) {
	raw, err := dsl.ParseAssignments(f.inputs)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range raw {
		path, ok := strings.CutPrefix(v, "@")
		if !ok || path == "" {
			continue
		}
		data, err := readInputFile("--input "+k, path)
		if err != nil {
			return nil, nil, err
		}
		raw[k] = string(data)
	}
	var typed map[string]any
	if f.inputFile != "" {
		data, err := readInputFile("--input-file", f.inputFile)
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(data, &typed); err != nil || typed == nil {
			return nil, nil, fmt.Errorf("--input-file %s: want a JSON object of inputs, {\"name\": value, ...}: %v", f.inputFile, err)
		}
	}
	return raw, typed, nil
}
