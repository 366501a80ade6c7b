// SPDX-License-Identifier: GPL-2.0-only
// Port of fs/file.c (+ fs/open.c filp_close): the fd table's install, close
// and the lookups that take a reference. A syscall on an fd holds the file
// from its fget/fdget to its fput/fdput, so a concurrent close(2) drops only
// the table's reference: the file (and the map it carries) is released at the
// last fput, which may be the syscall's own (fput is in mm/mmap.cpp).
#include "mm.h"

namespace fl::FL_ARCH_NS {

// The harness's one table (see files_struct); the kernel's is current->files.
static files_struct *current_files(void)
{
	return &kg->files;
}

// fs/file.c: fd_install (the slot is the caller's: get_unused_fd_flags)
void fd_install(unsigned int fd, file *f)
{
	files_struct *files = current_files();

	BUG_ON(fd >= NR_OPEN_DEFAULT || files->fd_array[fd]);
	FL_SHARED_ACCESS(&files->fd_array[fd], kFdTable, marked_write, "fd_array");
	files->fd_array[fd] = f;  /* rcu_assign_pointer */
}

// fs/file.c: file_close_fd_locked (pick_file in older kernels), under
// files->file_lock: the look and the clear are one step for every other
// close of the same fd.
static file *file_close_fd_locked(files_struct *files, unsigned int fd)
{
	file *f;

	if (fd >= NR_OPEN_DEFAULT)
		return nullptr;
	FL_SHARED_ACCESS(&files->fd_array[fd], kFdTable, read, "fd_array");
	f = files->fd_array[fd];
	if (f) {
		FL_SHARED_ACCESS(&files->fd_array[fd], kFdTable, write, "fd_array");
		files->fd_array[fd] = nullptr;  /* rcu_assign_pointer, __put_unused_fd */
	}
	return f;
}

// fs/open.c: filp_close (no ->flush, no dnotify/locks: the fput)
static int filp_close(file *f)
{
	fput(f);
	return 0;
}

// fs/file.c: close_fd (close(2)): the table's reference only
int close_fd(unsigned int fd)
{
	files_struct *files = current_files();
	file *f;

#if !defined(FL_PLANT_CLOSE_FD_NO_FILE_LOCK)
	spin_lock(&files->file_lock);
#endif
	f = file_close_fd_locked(files, fd);
#if !defined(FL_PLANT_CLOSE_FD_NO_FILE_LOCK)
	spin_unlock(&files->file_lock);
#endif
	if (!f)
		return -EBADF;

	return filp_close(f);
}

// fs/file.c: __fget_files (files_lookup_fd_rcu + get_file_rcu, under RCU;
// no FMODE_PATH files in the port, so no mask)
static file *__fget_files(files_struct *files, unsigned int fd)
{
	file *f;

	if (fd >= NR_OPEN_DEFAULT)
		return nullptr;
	FL_SHARED_ACCESS(&files->fd_array[fd], kFdTable, marked_read, "fd_array");
	f = files->fd_array[fd];  /* files_lookup_fd_rcu */
	if (f)
		get_file(f);
	return f;
}

// fs/file.c: fget (mmap(2)'s ksys_mmap_pgoff, among many)
file *fget(unsigned int fd)
{
	return __fget_files(current_files(), fd);
}

// fs/file.c: fdget -> __fget_light. The harness's table is shared
// (files->count > 1), so this is always its __fget branch: a reference,
// and FDPUT_FPUT for fdput to drop it.
struct fd fdget(unsigned int fd)
{
	file *f = __fget_files(current_files(), fd);

	return {f, f ? FDPUT_FPUT : 0};
}

}  // namespace fl::FL_ARCH_NS
