/* One store kept open across checkpoints, as the filesystem daemon keeps
 * it: what the daemon remembers between two checkpoints (the big trees of
 * store_big.c, the stat cache) is used, which a hermesctl process a
 * checkpoint never does. For store_random.py (STORE_RANDOM_STEPS_DRIVER).
 *
 * stdin, one request per line: N, then N lines of paths relative to TREE;
 * stdout: one line per request, the checkpoint's id (the head when nothing
 * changed) or "error: <message>". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "store.h"

int main(int argc, char **argv)
{
	struct config *cfg = NULL;
	struct store *st = NULL;
	struct herr e = HERR_INIT;
	char line[8192], oid[STORE_OID_HEX];
	int rootfd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TREE\n", argv[0]);
		return 2;
	}
	if (config_load(NULL, &cfg, &e) < 0 || store_open(argv[1], cfg, &st, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return perror(argv[1]), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		size_t n = strtoul(line, NULL, 10);
		char **paths = calloc(n + 1, sizeof(*paths));
		int r;

		for (size_t i = 0; paths && i < n && fgets(line, sizeof(line), stdin); i++) {
			line[strcspn(line, "\n")] = '\0';
			paths[i] = strdup(line);
		}
		if (!paths)
			return 1;
		err_clear(&e);
		r = store_checkpoint_paths(st, rootfd, (const char *const *)paths, n, NULL, oid, &e);
		if (r < 0)
			printf("error: %s\n", e.msg);
		else
			printf("%s\n", oid);
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
	}
	store_close(st);
	config_free(cfg);
	close(rootfd);
	return 0;
}
