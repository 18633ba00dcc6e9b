/* Running the FUSE session of a prepared struct hfs (see session.c). */
#pragma once

#include "hfs.h"

/* Create the session from args, mount, start the control socket, write
 * the registry record, call detach(detach_arg) once all of that holds, and
 * serve until unmounted or signalled. threads <= 0: the default. */
int session_run(struct hfs *fs, struct fuse_args *args, int threads, int clone_fd,
		void (*detach)(void *), void *detach_arg, struct herr *e);
/* What "hermesfs --watchdog MINOR PID MOUNTPOINT" runs (session.c): wait
 * for the daemon's main thread to die, then abort its FUSE connection if
 * the mount is still there. */
int session_watchdog_main(const char *minor, const char *parent, const char *mountpoint);
