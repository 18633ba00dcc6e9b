/* Routing to a tree's daemon: when a tree is mounted, the commands that
 * write to its store (checkpoint, restore) ask the daemon, so its store has
 * one writer and a restore is ordered with the other writes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hctl_daemon.h"
#include "hctl_store.h"
#include "hermesctl.h"
#include "jsonl.h"

int hctl_tree_daemon(const char *tree, struct mount_info *m)
{
	if (mounts_find(tree, m) < 0 || strcmp(m->source, tree) != 0)
		return 0;
	if (!m->mounted)
		return 0; /* a stale record: the tree is a plain directory again */
	if (!m->alive) {
		hctl_error("the daemon of %s died (pid %d); 'hermesctl mount %s' recovers it",
			   m->mountpoint, m->pid, m->source);
		return -1;
	}
	return 1;
}

int hctl_daemon_call(const struct mount_info *m, cJSON *req, cJSON **resp)
{
	struct herr e = HERR_INIT;
	cJSON *r = NULL;

	/* a restore or a checkpoint of a big tree takes as long as it takes */
	int rc = ctl_call(m->sock, req, &r, 30 * 60 * 1000, &e);
	cJSON_Delete(req);
	if (rc < 0) {
		const cJSON *en = cJSON_GetObjectItemCaseSensitive(r, "errno");
		int code = cJSON_IsNumber(en) ? -(int)en->valuedouble : rc;
		cJSON_Delete(r);
		hctl_error("%s", e.msg);
		return hctl_exit_for(code);
	}
	*resp = r;
	return HCTL_OK;
}

const char *hctl_json_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}
