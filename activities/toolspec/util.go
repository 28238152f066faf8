package toolspec

// intInput returns inputs[name] as an int when it is a literal number, else def.
func intInput(inputs map[string]any, name string, def int) int {
	switch v := inputs[name].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return def
}

// boolInput returns inputs[name] when it is a literal boolean, else def.
func boolInput(inputs map[string]any, name string, def bool) bool {
	if v, ok := inputs[name].(bool); ok {
		return v
	}
	return def
}

var readOnlyClosed = Annotations{ReadOnly: true, Idempotent: true}
var readOnlyOpen = Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}
