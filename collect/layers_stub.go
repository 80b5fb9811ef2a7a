package collect

// The layer types are defined in their collectors' files. These
// placeholders are replaced by them; they exist so the package builds while
// the collectors are written.
type (
	Nginx     struct{}
	Memcached struct{}
	Redis     struct{}
)
