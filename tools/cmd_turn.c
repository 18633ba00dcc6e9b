/* hermesctl turn: tell the daemon of a mounted tree that a new turn begins,
 * so the tree is checkpointed before the turn's first change. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hermesctl.h"
#include "jsonl.h"
#include "mounts.h"

static void turn_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl turn [-m REASON] [-C DIR] [--json]\n"
		"\n"
		"Start a new turn on the mounted tree holding DIR (default: the current\n"
		"directory). The tree as it is now is checkpointed right before the turn's\n"
		"first change; a turn that changes nothing leaves no checkpoint.\n"
		"\n"
		"  -m, --message REASON  why (shown by 'hermesctl rollback'; default \"turn\")\n"
		"  -C DIR                a directory inside the mounted tree\n"
		"  --json                print the daemon's answer as JSON\n"
		"  -h, --help            this help\n");
}

int cmd_turn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "message", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = "turn", *dir = ".";
	char path[PATH_MAX];
	struct mount_info m;
	struct herr e = HERR_INIT;
	int json = 0, c;

	while ((c = getopt_long(argc, argv, "m:C:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': reason = optarg; break;
		case 'C': dir = optarg; break;
		case 'j': json = 1; break;
		case 'h': turn_usage(stdout); return HCTL_OK;
		default: turn_usage(stderr); return HCTL_USAGE;
		}
	}
	if (optind != argc) {
		turn_usage(stderr);
		return HCTL_USAGE;
	}
	if (hctl_find_mount(dir, 0, path, sizeof(path), &m) < 0) {
		hctl_error("%s is not inside a hermesfs mount (see 'hermesctl status')", dir);
		return HCTL_NOTFOUND;
	}
	if (!m.alive) {
		hctl_error("the daemon of %s died; 'hermesctl mount %s' recovers it",
			   m.mountpoint, m.source);
		return HCTL_DEAD;
	}
	cJSON *req = cJSON_CreateObject(), *resp = NULL;
	cJSON_AddStringToObject(req, "op", "turn");
	cJSON_AddStringToObject(req, "reason", reason);
	int r = ctl_call(m.sock, req, &resp, 10000, &e);
	cJSON_Delete(req);
	if (r < 0) {
		cJSON_Delete(resp);
		hctl_error("turn on %s: %s", m.mountpoint, e.msg);
		return HCTL_FAIL;
	}
	if (json)
		hctl_print_json(resp);
	else
		cJSON_Delete(resp);
	return HCTL_OK;
}
