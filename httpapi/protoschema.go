package httpapi

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoSchema is the JSON Schema of a message as weftclient.ProtoJSON writes it on every surface
// (proto JSON: lowerCamelCase names, well-known types as their JSON forms; 64-bit integers as
// numbers, not the strings protojson writes), read from its descriptor:
// the wire messages of proto/weft/v1 have Go types whose json tags are not what is sent.
func protoSchema(md protoreflect.MessageDescriptor) map[string]any {
	props := map[string]any{}
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		props[f.JSONName()] = protoField(f)
	}
	return map[string]any{"type": "object", "properties": props}
}

func protoField(f protoreflect.FieldDescriptor) any {
	if f.IsMap() {
		return map[string]any{"type": "object", "additionalProperties": protoKind(f.MapValue())}
	}
	s := protoKind(f)
	if f.IsList() {
		return map[string]any{"type": "array", "items": s}
	}
	return s
}

// protoKind is the schema of one value of field f.
func protoKind(f protoreflect.FieldDescriptor) map[string]any {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}
	case protoreflect.StringKind, protoreflect.EnumKind:
		return map[string]any{"type": "string"}
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return map[string]any{"type": "integer"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return map[string]any{"type": "integer", "format": "int64"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return map[string]any{"type": "number"}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch m := f.Message(); m.FullName() {
		case "google.protobuf.Timestamp":
			return map[string]any{"type": "string", "format": "date-time"}
		case "google.protobuf.Duration":
			return map[string]any{"type": "string", "description": "seconds with an s suffix: 1.5s"}
		case "google.protobuf.Struct":
			return map[string]any{"type": "object"}
		case "google.protobuf.ListValue":
			return map[string]any{"type": "array"}
		case "google.protobuf.Value":
			return map[string]any{"description": "any JSON value"}
		default:
			return map[string]any{"$ref": componentRef + string(m.Name())}
		}
	}
	return map[string]any{}
}
