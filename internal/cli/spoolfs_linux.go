package cli

import "syscall"

// inMemoryFS reports whether dir is on a file system held in memory
// (tmpfs, ramfs), where a spool saves nothing.
func inMemoryFS(dir string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return false
	}
	const tmpfsMagic, ramfsMagic = 0x01021994, 0x858458f6
	return st.Type == tmpfsMagic || st.Type == ramfsMagic
}
