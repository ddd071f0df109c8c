// Package wire converts between the protobuf wire types of messages/gen and
// the engine's types, and parses resource amounts written by people
// ("cpu=8,memory=16Gi"). Conversions from the wire validate: a NaN, an
// infinity or a negative amount is an error naming the field.
package wire
