package pbyaml

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// kindsDescriptor is a test message with a field of every scalar kind,
// lists, maps, a oneof, an enum, and the well-known types:
//
//	enum Color { COLOR_UNSPECIFIED = 0; COLOR_RED = 1; COLOR_DARK_BLUE = 2; }
//	message Kinds {
//	  bool b = 1; int32 i32 = 2; int64 i64 = 3; uint32 u32 = 4; uint64 u64 = 5;
//	  sint32 s32 = 6; sint64 s64 = 7; fixed32 f32 = 8; fixed64 f64 = 9;
//	  sfixed32 sf32 = 10; sfixed64 sf64 = 11; float fl = 12; double db = 13;
//	  string str = 14; bytes by = 15; Color color = 16;
//	  repeated int64 ints = 17; repeated Kinds children = 18;
//	  map<string, Kinds> named = 19; map<int32, string> numbered = 20;
//	  oneof choice { string left = 21; Kinds right = 22; }
//	  google.protobuf.Duration dur = 23; google.protobuf.Timestamp ts = 24;
//	  google.protobuf.Int32Value wrapped = 25; repeated Color colors = 26;
//	  optional double maybe = 27; string snake_name = 28;
//	}
func kindsDescriptor(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	type F = descriptorpb.FieldDescriptorProto
	T := func(k descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto_Type { return &k }
	L := func(l descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto_Label { return &l }
	opt, rep := L(descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL), L(descriptorpb.FieldDescriptorProto_LABEL_REPEATED)
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label *descriptorpb.FieldDescriptorProto_Label, typeName string) *F {
		f := &F{Name: proto.String(name), Number: proto.Int32(num), Type: T(typ), Label: label}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	oneof := func(f *F, idx int32) *F { f.OneofIndex = proto.Int32(idx); return f }
	ty := descriptorpb.FieldDescriptorProto_Type_value
	k := func(s string) descriptorpb.FieldDescriptorProto_Type {
		return descriptorpb.FieldDescriptorProto_Type(ty["TYPE_"+s])
	}
	fields := []*F{
		field("b", 1, k("BOOL"), opt, ""), field("i32", 2, k("INT32"), opt, ""), field("i64", 3, k("INT64"), opt, ""),
		field("u32", 4, k("UINT32"), opt, ""), field("u64", 5, k("UINT64"), opt, ""), field("s32", 6, k("SINT32"), opt, ""),
		field("s64", 7, k("SINT64"), opt, ""), field("f32", 8, k("FIXED32"), opt, ""), field("f64", 9, k("FIXED64"), opt, ""),
		field("sf32", 10, k("SFIXED32"), opt, ""), field("sf64", 11, k("SFIXED64"), opt, ""), field("fl", 12, k("FLOAT"), opt, ""),
		field("db", 13, k("DOUBLE"), opt, ""), field("str", 14, k("STRING"), opt, ""), field("by", 15, k("BYTES"), opt, ""),
		field("color", 16, k("ENUM"), opt, ".t.Color"), field("ints", 17, k("INT64"), rep, ""),
		field("children", 18, k("MESSAGE"), rep, ".t.Kinds"), field("named", 19, k("MESSAGE"), rep, ".t.Kinds.NamedEntry"),
		field("numbered", 20, k("MESSAGE"), rep, ".t.Kinds.NumberedEntry"),
		oneof(field("left", 21, k("STRING"), opt, ""), 0), oneof(field("right", 22, k("MESSAGE"), opt, ".t.Kinds"), 0),
		field("dur", 23, k("MESSAGE"), opt, ".google.protobuf.Duration"), field("ts", 24, k("MESSAGE"), opt, ".google.protobuf.Timestamp"),
		field("wrapped", 25, k("MESSAGE"), opt, ".google.protobuf.Int32Value"), field("colors", 26, k("ENUM"), rep, ".t.Color"),
		func() *F {
			f := field("maybe", 27, k("DOUBLE"), opt, "")
			f.Proto3Optional = proto.Bool(true)
			f.OneofIndex = proto.Int32(1)
			return f
		}(),
		field("snake_name", 28, k("STRING"), opt, ""),
	}
	for _, f := range fields {
		f.JsonName = proto.String(jsonName(f.GetName()))
	}
	entry := func(name string, key, val *F) *descriptorpb.DescriptorProto {
		key.JsonName, val.JsonName = proto.String("key"), proto.String("value")
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: []*F{key, val},
			Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}}
	}
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("t/kinds.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/duration.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Color"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
			{Name: proto.String("COLOR_DARK_BLUE"), Number: proto.Int32(2)},
		}}},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Kinds"), Field: fields,
			OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}, {Name: proto.String("_maybe")}},
			NestedType: []*descriptorpb.DescriptorProto{
				entry("NamedEntry", field("key", 1, k("STRING"), opt, ""), field("value", 2, k("MESSAGE"), opt, ".t.Kinds")),
				entry("NumberedEntry", field("key", 1, k("INT32"), opt, ""), field("value", 2, k("STRING"), opt, "")),
			},
		}},
	}
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return file.Messages().ByName("Kinds")
}

// jsonName is protoc's lowerCamelCase of a field name.
func jsonName(s string) string {
	out, up := []byte{}, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_':
			up = true
		case up && 'a' <= c && c <= 'z':
			out, up = append(out, c-'a'+'A'), false
		default:
			out, up = append(out, c), false
		}
	}
	return string(out)
}

func newKinds(t testing.TB) *dynamicpb.Message { return dynamicpb.NewMessage(kindsDescriptor(t)) }
