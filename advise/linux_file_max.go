package advise

import "fmt"

// linux-file-max: fs.file-max is the system-wide limit on open files;
// every process's own limit (LimitNOFILE) is useless past it (the PHP + MySQL TIME_WAIT write-up
// checked fs.file-max next to the process limits).
var linuxFileMax = ruleFunc{"linux-file-max", LayerLinux, checkLinuxFileMax}

// fileMaxNear is the share of fs.file-max in use that is worth a raise.
const fileMaxNear = 0.8

func checkLinuxFileMax(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	fh := c.Linux.FileHandles
	if fh.Max <= 0 || float64(fh.Allocated) < fileMaxNear*float64(fh.Max) {
		return nil
	}
	value := nextPow2(fh.Allocated * 2)
	return []Finding{{
		ID:       "linux-file-max",
		Title:    fmt.Sprintf("%d of fs.file-max %d file handles are in use", fh.Allocated, fh.Max),
		Severity: Critical,
		Evidence: []Evidence{ev("allocated file handles", fmt.Sprint(fh.Allocated), "files", "/proc/sys/fs/file-nr"),
			ev("fs.file-max", fmt.Sprint(fh.Max), "files", "/proc/sys/fs/file-nr")},
		Change: c.SysctlChange("fs.file-max", fmt.Sprint(value), Increase),
		Effect: "open() and accept() stop failing with ENFILE (\"Too many open files in system\") for every process on the host",
		Source: "the PHP + MySQL TIME_WAIT write-up (fs.file-max); Linux Documentation/admin-guide/sysctl/fs.rst",
	}}
}
