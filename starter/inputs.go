package starter

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftworks/weft/internal/safefile"
	"github.com/weftworks/weft/workflows/dsl"
)

// MaxInputFileBytes caps --input-file and --input name=@file. A run's inputs travel in its
// start request, which Temporal caps at 2 MB: keep large data in the knowledge store.
const MaxInputFileBytes = 4 << 20

// readInputFile reads a bounded file, refusing an oversized one (or a directory, a device, a
// named pipe) before reading it.
func readInputFile(flag, path string) ([]byte, error) {
	return safefile.ReadHint(path, MaxInputFileBytes, flag,
		"Temporal keeps a run's inputs in its history, 2 MB at most: ingest large data into a collection and pass its name")
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
