package nginxconf

// The nginx -t helpers of nginx_test.go, for the external tests
// (emit_test.go).
var (
	NginxBinary = nginxBinary
	CopyConf    = copyConf
	NginxT      = nginxT
)
