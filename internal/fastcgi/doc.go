// Package fastcgi is a minimal FastCGI client (the responder role of the
// FastCGI 1.0 specification): one request per connection, parameters in,
// the CGI response's status, headers and body out. stacktune uses it to
// ask PHP-FPM for its status and ping pages directly on a pool's socket,
// without a web server in front: the collector (collect/phpfpm.go), the
// sandbox's readiness check and the PHP-FPM apply target's read-back.
//
// Everything read is bounded: a response body over Options.MaxBody is an
// error, records are read one at a time, and the context's deadline (or
// DefaultTimeout) bounds the exchange.
package fastcgi
