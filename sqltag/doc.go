// Package sqltag reads the tags applications put in their SQL as comments,
// so that stacktune can tell which request ran a statement without an APM
// agent:
//
//   - sqlcommenter (OpenTelemetry's, Google's and many ORMs'):
//     /*action='show',controller='books',route='%2Fbooks%2F%7Bid%7D',traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'*/
//     keys and values URL-encoded, values in single quotes with \' for a
//     quote, pairs sorted by key and joined by commas;
//   - marginalia and Rails' query log tags (legacy format):
//     /*application:Shop,controller:books,action:show,request_id:0a1b...*/
//     key:value pairs, the value running to the next comma;
//   - the plain form some tools write: /* route=/books, request_id=42 */.
//
// Parse scans a statement once, skipping string literals and quoted
// identifiers, and reads every block comment that is not an optimizer hint
// or a version comment (/*+ ... */, /*! ... */); the last comment holding
// tags wins for a key written twice. It allocates only for the tags it
// returns and is bounded whatever the input: at most MaxTags tags, keys up
// to MaxKey bytes and values up to MaxValue bytes (longer ones are cut and
// the result says so); a comment that is not tags is ignored.
//
// A tag set names a request (Request: the trace ID of a W3C traceparent, or
// a request_id) and an endpoint (Endpoint: route, with the HTTP method when
// a tag gives it; else controller#action). Tags never change a statement's
// digest class: fingerprints are pt-query-digest's, which drop block
// comments (see fingerprint.Merged for the trailing space a tag at the end
// leaves).
package sqltag
