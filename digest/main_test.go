package digest

import goflag "flag"

var update = goflag.Bool("update", false, "rewrite golden files")
