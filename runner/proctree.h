/* A job's process tree as the kernel sees it: the runner is a child
 * subreaper, so every descendant, daemonized or not, stays below it. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Make this process the reaper of its orphaned descendants. */
int proctree_become_subreaper(void);
/* Live descendants of this process (zombies of its own children other
 * than keep are reaped on the way). Returns the count, or a negative errno;
 * when out is non-NULL it receives up to max pids. */
long proctree_descendants(pid_t keep, pid_t *out, size_t max);
/* A child of ours that is no part of any job (the backend's guard):
 * never counted nor signalled. 0 for none. */
void proctree_ignore(pid_t pid);
/* SIGKILL every process in session or process group sid (a job started
 * with setsid), found by a /proc scan: no parent links needed. */
void proctree_kill_session(pid_t sid);
/* Send sig to job's process group and to every live descendant of this
 * process. Returns how many descendants were signalled. */
long proctree_signal(pid_t job, int sig);
