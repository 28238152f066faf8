package wirejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Marshal is the one JSON encoding of weft's wire messages (a run's state, its steps, reviews,
// results) that every surface writes: `weft status --json`, the HTTP API, MCP and the console.
// It is the proto JSON mapping (lowerCamelCase names, well-known types as their JSON forms),
// except that 64-bit integers (durations, token counts) are JSON numbers, not strings: weft's
// values are far below 2^53, so no JavaScript or float reader loses a digit, and a number reads
// the same on every surface as the run's usage totals beside it. protojson.Unmarshal accepts
// numbers for those fields, so the output reads back into the message. Only the message's own
// fields are rewritten, found by its descriptor: a key of the same name inside a step's output
// (a google.protobuf.Value) keeps the value it has. The output is compact.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	if m == nil || !m.ProtoReflect().IsValid() {
		return b, nil
	}
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := copyMessage(dec, &out, m.ProtoReflect().Descriptor()); err != nil {
		return nil, fmt.Errorf("writing %s as JSON: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		return nil, fmt.Errorf("writing %s as JSON: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return compact.Bytes(), nil
}

// copyMessage copies the next JSON value, a message of type md, from dec to w.
func copyMessage(dec *json.Decoder, w *bytes.Buffer, md protoreflect.MessageDescriptor) error {
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return copyValue(dec, w) // a well-known type's own JSON form
	}
	if err := expect(dec, '{'); err != nil {
		return err
	}
	w.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if i > 0 {
			w.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		w.Write(k)
		w.WriteByte(':')
		f := md.Fields().ByJSONName(key)
		if f == nil {
			err = copyValue(dec, w)
		} else {
			err = copyField(dec, w, f)
		}
		if err != nil {
			return err
		}
	}
	if err := expect(dec, '}'); err != nil {
		return err
	}
	w.WriteByte('}')
	return nil
}

// copyField copies the value of field f: a list, a map or one value.
func copyField(dec *json.Decoder, w *bytes.Buffer, f protoreflect.FieldDescriptor) error {
	switch {
	case f.IsMap():
		if err := expect(dec, '{'); err != nil {
			return err
		}
		w.WriteByte('{')
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			if i > 0 {
				w.WriteByte(',')
			}
			k, _ := json.Marshal(tok)
			w.Write(k)
			w.WriteByte(':')
			if err := copyOne(dec, w, f.MapValue()); err != nil {
				return err
			}
		}
		if err := expect(dec, '}'); err != nil {
			return err
		}
		w.WriteByte('}')
		return nil
	case f.IsList():
		if err := expect(dec, '['); err != nil {
			return err
		}
		w.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := copyOne(dec, w, f); err != nil {
				return err
			}
		}
		if err := expect(dec, ']'); err != nil {
			return err
		}
		w.WriteByte(']')
		return nil
	}
	return copyOne(dec, w, f)
}

// copyOne copies one value of field f, a 64-bit integer as a number.
func copyOne(dec *json.Decoder, w *bytes.Buffer, f protoreflect.FieldDescriptor) error {
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return copyMessage(dec, w, f.Message())
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return copyInt(dec, w, func(s string) error { _, err := strconv.ParseInt(s, 10, 64); return err })
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return copyInt(dec, w, func(s string) error { _, err := strconv.ParseUint(s, 10, 64); return err })
	}
	return copyValue(dec, w)
}

// copyInt writes a 64-bit integer that proto JSON wrote as a string ("19") as a number (19).
func copyInt(dec *json.Decoder, w *bytes.Buffer, valid func(string) error) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && valid(s) == nil {
		w.WriteString(s)
		return nil
	}
	w.Write(raw)
	return nil
}

// copyValue copies the next JSON value as it is.
func copyValue(dec *json.Decoder, w *bytes.Buffer) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	w.Write(raw)
	return nil
}

// expect reads the delimiter d.
func expect(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return fmt.Errorf("the JSON ends before %q", d)
	}
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("read %v where %q was expected", tok, d)
	}
	return nil
}
