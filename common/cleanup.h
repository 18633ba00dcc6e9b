/* Scope-bound ownership: locals declared with these attributes release
 * their resource when they go out of scope (bubblewrap/crun style). */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void cleanup_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cleanup_freep)
#define _cleanup_close_ _cleanup_(cleanup_closep)
#define _cleanup_fclose_ _cleanup_(cleanup_fclosep)
#define _cleanup_closedir_ _cleanup_(cleanup_closedirp)

/* Hand ownership out of a cleanup-managed local. */
static inline int steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

static inline void *steal_ptr(void *p)
{
	void *r = *(void **)p;
	*(void **)p = NULL;
	return r;
}
