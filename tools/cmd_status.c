/* hermesctl status: every hermesfs mount of this HERMES_HOME with its daemon's
 * health, plus hermesfs mounts the kernel has that no record explains. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cleanup.h"
#include "hermesctl.h"
#include "jsonl.h"
#include "mounts.h"

static void status_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl status [--json] [DIR]\n"
		"\n"
		"Show the mounted trees: mountpoint, tree, daemon pid, state, uptime, log.\n"
		"States: ok (the daemon answers), dead (the daemon died: the mount answers\n"
		"ENOTCONN; 'hermesctl mount DIR' recovers it, 'hermesctl umount DIR' removes\n"
		"it), unresponsive (alive but not answering), stale (a record without a mount),\n"
		"unregistered (a hermesfs mount with no record here: mounted from /etc/fstab\n"
		"or with another HERMES_HOME; 'hermesctl umount' still unmounts it).\n"
		"With DIR, only the mount holding DIR (exit 3 if none).\n"
		"Exit status 5 when any mount is dead.\n"
		"\n"
		"  --json      one JSON object: {\"mounts\":[...]}; a live mount also has\n"
		"              ops (requests served, by kind), inodes (records the kernel\n"
		"              holds), inode_fds (kept as O_PATH fds), inode_handles (as\n"
		"              file handles, past the fd budget), inode_handle_fds (fds of\n"
		"              those kept for reuse) and checkpoints\n"
		"  -h, --help  this help\n");
}

static const char *mount_state(const struct mount_info *m, cJSON **detail)
{
	struct herr e = HERR_INIT;
	cJSON *req, *resp = NULL;

	if (!m->alive)
		return m->mounted ? "dead" : "stale";
	if (!m->mounted)
		return "stale";
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "status");
	int r = ctl_call(m->sock, req, &resp, 2000, &e);
	cJSON_Delete(req);
	if (r < 0) {
		cJSON_Delete(resp);
		return "unresponsive";
	}
	*detail = resp;
	return "ok";
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void status_print_checkpoints(const cJSON *ck)
{
	const cJSON *v;

	if (!ck)
		return;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "enabled"))) {
		v = cJSON_GetObjectItemCaseSensitive(ck, "reason");
		printf("       checkpoints OFF: %s\n", cJSON_IsString(v) ? v->valuestring : "?");
		return;
	}
	printf("       checkpoints on: %.0f taken, turn %.0f, %.0f path%s changed since the last",
	       num(ck, "checkpoints_taken"), num(ck, "turn"), num(ck, "dirty_paths"),
	       num(ck, "dirty_paths") == 1 ? "" : "s");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "scanning")))
		printf("; scanning the tree (%.0f files so far)", num(ck, "scanned_files"));
	putchar('\n');
	if (num(ck, "checkpoint_failures") > 0) {
		v = cJSON_GetObjectItemCaseSensitive(ck, "last_error");
		printf("       CHECKPOINT FAILURES: %.0f; last: %s\n", num(ck, "checkpoint_failures"),
		       cJSON_IsString(v) ? v->valuestring : "(cleared)");
	}
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ struct mount_info *v = NULL;
	char only[PATH_MAX] = "";
	size_t n = 0;
	int json = 0, c, dead = 0, shown = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': status_usage(stdout); return HCTL_OK;
		default: status_usage(stderr); return HCTL_USAGE;
		}
	}
	if (argc - optind > 1) {
		status_usage(stderr);
		return HCTL_USAGE;
	}
	if (argc - optind == 1) {
		struct mount_info m;
		int r = hctl_find_mount(argv[optind], 0, only, sizeof(only), &m);
		if (r < 0 && r != -ENOENT) {
			hctl_error("%s: bad path", argv[optind]);
			return HCTL_USAGE;
		}
	}
	if (mounts_list(&v, &n) < 0) {
		hctl_error("cannot read the mount records: %s", strerror(errno));
		return HCTL_FAIL;
	}
	cJSON *arr = cJSON_CreateArray();
	if (!json)
		printf("%-12s %-7s %-9s %s\n", "STATE", "PID", "UPTIME", "MOUNT");
	for (size_t i = 0; i < n; i++) {
		cJSON *detail = NULL;
		if (only[0] && !paths_is_under(only, v[i].mountpoint) &&
		    !paths_is_under(only, v[i].source))
			continue;
		const char *state = mount_state(&v[i], &detail);
		/* only a daemon that runs has an uptime */
		int running = strcmp(state, "ok") == 0 || strcmp(state, "unresponsive") == 0;
		long long up = v[i].started ? (long long)time(NULL) - v[i].started : 0;
		dead += strcmp(state, "dead") == 0;
		shown++;
		if (json) {
			cJSON *o = hctl_mount_json(&v[i]);
			cJSON_AddBoolToObject(o, "registered", 1);
			cJSON_AddStringToObject(o, "state", state);
			if (running)
				cJSON_AddNumberToObject(o, "uptime_s", (double)up);
			if (detail) {
				static const char *const keep[] = { "ops", "checkpoints", "inodes", "inode_fds",
								   "inode_handles", "inode_handle_fds" };
				for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
					cJSON *it = cJSON_DetachItemFromObject(detail, keep[k]);
					if (it)
						cJSON_AddItemToObject(o, keep[k], it);
				}
			}
			cJSON_AddItemToArray(arr, o);
		} else {
			char upbuf[32];
			if (running)
				snprintf(upbuf, sizeof(upbuf), "%lldh%02lldm", up / 3600, up / 60 % 60);
			else
				snprintf(upbuf, sizeof(upbuf), "-");
			printf("%-12s %-7d %-9s %s", state, v[i].pid, upbuf, v[i].mountpoint);
			if (strcmp(v[i].source, v[i].mountpoint) != 0)
				printf(" (tree %s)", v[i].source);
			else
				printf(" (in place)");
			printf("\n");
			if (detail) {
				const cJSON *ck = cJSON_GetObjectItemCaseSensitive(detail, "checkpoints");
				status_print_checkpoints(ck);
			}
			if (strcmp(state, "dead") == 0)
				printf("       the daemon died: 'hermesctl mount %s' recovers it; "
				       "log: %s\n", v[i].source, v[i].log);
			else if (strcmp(state, "stale") == 0)
				printf("       no mount any more, only its record%s: 'hermesctl mount %s' "
				       "mounts it again, 'hermesctl umount %s' drops the record; log: %s\n",
				       v[i].alive ? " (its daemon still runs)" : "", v[i].source,
				       v[i].source, v[i].log);
			else if (strcmp(state, "unresponsive") == 0)
				printf("       the daemon (pid %d) runs but does not answer on %s; log: %s\n",
				       v[i].pid, v[i].sock, v[i].log);
		}
		cJSON_Delete(detail);
	}
	/* hermesfs mounts the kernel has that no record of ours explains */
	struct kernel_mount *km = NULL;
	size_t nk = 0;
	if (mounts_kernel_hermesfs(&km, &nk) < 0)
		nk = 0;
	for (size_t k = 0; k < nk; k++) {
		int known = 0;
		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(v[i].mountpoint, km[k].mountpoint) == 0;
		if (known || (only[0] && !paths_is_under(only, km[k].mountpoint) &&
			      !paths_is_under(only, km[k].source)))
			continue;
		int is_dead = mounts_fuse_dead(km[k].mountpoint);
		const char *state = is_dead ? "dead" : "unregistered";
		dead += is_dead;
		shown++;
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "source", km[k].source);
			cJSON_AddStringToObject(o, "mountpoint", km[k].mountpoint);
			cJSON_AddBoolToObject(o, "in_place",
					      strcmp(km[k].source, km[k].mountpoint) == 0);
			cJSON_AddBoolToObject(o, "registered", 0);
			cJSON_AddStringToObject(o, "state", state);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-12s %-7s %-9s %s", state, "-", "-", km[k].mountpoint);
			if (strcmp(km[k].source, km[k].mountpoint) != 0)
				printf(" (tree %s)", km[k].source);
			else
				printf(" (in place)");
			printf("\n       no record in this HERMES_HOME (mounted from /etc/fstab or "
			       "another HERMES_HOME)%s\n",
			       is_dead ? "; its daemon died: 'hermesctl umount' removes it" : "");
		}
	}
	free(km);
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "mounts", arr);
		hctl_print_json(o);
	} else {
		cJSON_Delete(arr);
		if (!shown)
			printf("(no hermesfs mounts%s)\n", only[0] ? " hold that path" : "");
	}
	if (only[0] && !shown)
		return HCTL_NOTFOUND;
	return dead ? HCTL_DEAD : HCTL_OK;
}
