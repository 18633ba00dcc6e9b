/* Turn marking for jobs: finds the mounted tree holding the job's working
 * directory and sends {"op":"turn"} over its control socket. */
#include "turn.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "log.h"
#include "mounts.h"

#define TURN_TIMEOUT_MS 10000
#define TURN_REASON_MAX 200

int turn_mark(const char *cwd, const char *reason, struct herr *e)
{
	struct mount_info m;
	char why[TURN_REASON_MAX + 4];
	cJSON *req;
	int r = mounts_find(cwd, &m);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return err_sys(e, r, "cannot read the mount registry");
	if (!m.alive)
		return err_set(e, -ESRCH,
			       "%s is in the tree %s, whose hermesfs daemon (pid %d) is dead; "
			       "run 'hermesctl umount %s' and mount it again",
			       cwd, m.source, (int)m.pid, m.source);
	if (!m.mounted)
		return err_set(e, -ENOTCONN,
			       "%s is in the tree %s, which is registered but not mounted "
			       "at %s", cwd, m.source, m.mountpoint);
	/* A checkpoint message, not a transcript: keep it short. */
	snprintf(why, sizeof(why), "%.*s%s", TURN_REASON_MAX, reason,
		 strlen(reason) > TURN_REASON_MAX ? "..." : "");
	req = cJSON_CreateObject();
	if (!req || !cJSON_AddStringToObject(req, "op", "turn") ||
	    !cJSON_AddStringToObject(req, "reason", why) ||
	    !cJSON_AddNumberToObject(req, "pid", (double)getpid())) {
		cJSON_Delete(req);
		return err_set(e, -ENOMEM, "out of memory");
	}
	r = ctl_call(m.sock, req, NULL, TURN_TIMEOUT_MS, e);
	cJSON_Delete(req);
	if (r == -EIO &&
	    (strcasestr(e->msg, "unknown op") || strcasestr(e->msg, "unsupported op"))) {
		log_debug("turn: the daemon of %s does not support turns yet: %s", m.source,
			  e->msg);
		err_clear(e);
		return 0;
	}
	if (r < 0)
		return err_prefix(e, "cannot start a turn in %s", m.source);
	log_debug("turn: marked in %s: %s", m.source, why);
	return 0;
}
