// Package jsonschema describes, from a Go type, the JSON that
// encoding/json writes for it: field names, value types, and the codes
// of enumerations. The CLI's tests pin each --format json result's
// description in a golden file, so a change to a field or a code shows
// as a diff to review, and a change of wording in a renderer cannot
// reach the JSON.
//
// An enumeration is a string type with a Codes method listing its
// values (see Enum): the stable snake_case codes documented in
// docs/json.md. The walk needs no stacktune package: any type with the
// method is an enumeration.
package jsonschema
