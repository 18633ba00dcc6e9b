/* The control socket: a unix socket (0600) outside the tree, JSON lines in
 * and out, one thread per client. Requests are dispatched through
 * ctl_ops[]; a new request is one handler plus one table entry. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ckptd.h"
#include "hfs.h"
#include "jsonl.h"
#include "log.h"

struct ctl_client;

struct hfs_ctl {
	int listen_fd;
	int stop_fd; /* eventfd: written once by ctl_stop */
	pthread_t thread;
	/* the clients being served, which ctl_stop waits out: their
	 * requests use what the daemon frees after it */
	pthread_mutex_t lock;
	pthread_cond_t gone;
	struct ctl_client *clients;
};

/* Fill resp (already holding "ok": true) or return a negative errno with e set. */
typedef int (*ctl_fn)(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);

static int ctl_ping(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	(void)fs;
	(void)req;
	(void)resp;
	(void)e;
	return 0;
}

static int ctl_status(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	cJSON *ops = cJSON_CreateObject();

	(void)req;
	if (!ops)
		return err_set(e, -ENOMEM, "out of memory");
	cJSON_AddStringToObject(resp, "source", fs->source);
	cJSON_AddStringToObject(resp, "mountpoint", fs->mountpoint);
	cJSON_AddStringToObject(resp, "id", fs->id);
	cJSON_AddNumberToObject(resp, "pid", (double)getpid());
	cJSON_AddNumberToObject(resp, "uptime_s", (double)(time(NULL) - fs->started));
	cJSON_AddStringToObject(resp, "version", HERMES_VERSION);
	cJSON_AddBoolToObject(resp, "writeback", fs->writeback);
	pthread_mutex_lock(&fs->table_lock);
	cJSON_AddNumberToObject(resp, "inodes", (double)fs->table_count);
	pthread_mutex_unlock(&fs->table_lock);
	cJSON_AddNumberToObject(resp, "inode_fds", (double)atomic_load(&fs->kept_fds));
	cJSON_AddNumberToObject(resp, "inode_handles", (double)atomic_load(&fs->handle_recs));
	pthread_mutex_lock(&fs->hfd_lock);
	cJSON_AddNumberToObject(resp, "inode_handle_fds", (double)fs->hfd_count);
	pthread_mutex_unlock(&fs->hfd_lock);
	for (int i = 0; i < HFS_OP__COUNT; i++)
		cJSON_AddNumberToObject(ops, hfs_op_name(i),
					(double)atomic_load(&fs->ops[i]));
	cJSON_AddItemToObject(resp, "ops", ops);
	ckptd_status(fs, resp);
	return 0;
}

static const struct {
	const char *name;
	ctl_fn fn;
} ctl_ops[] = {
	{ "ping", ctl_ping },
	{ "status", ctl_status },
	{ "turn", ckptd_ctl_turn },
	{ "checkpoint", ckptd_ctl_checkpoint },
	{ "list", ckptd_ctl_list },
	{ "diff", ckptd_ctl_diff },
	{ "restore", ckptd_ctl_restore },
};

static cJSON *ctl_dispatch(struct hfs *fs, const cJSON *req)
{
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(req, "op");
	struct herr e = HERR_INIT;
	cJSON *resp = cJSON_CreateObject();
	int r = -ENOSYS;

	if (!resp)
		return NULL;
	cJSON_AddBoolToObject(resp, "ok", 1);
	if (!cJSON_IsString(op)) {
		err_set(&e, -EINVAL, "request without an \"op\" string");
		goto fail;
	}
	for (size_t i = 0; i < sizeof(ctl_ops) / sizeof(ctl_ops[0]); i++) {
		if (strcmp(ctl_ops[i].name, op->valuestring) == 0) {
			r = ctl_ops[i].fn(fs, req, resp, &e);
			break;
		}
	}
	if (r == -ENOSYS)
		err_set(&e, r, "unknown op '%s'", op->valuestring);
	if (r == 0)
		return resp;
fail:
	cJSON_Delete(resp);
	resp = cJSON_CreateObject();
	if (resp) {
		cJSON_AddBoolToObject(resp, "ok", 0);
		cJSON_AddStringToObject(resp, "error", e.msg);
		/* so a client can tell "no such checkpoint" from a failure */
		cJSON_AddNumberToObject(resp, "errno", e.code < 0 ? -e.code : EIO);
	}
	return resp;
}

struct ctl_client {
	struct hfs *fs;
	struct hfs_ctl *ctl;
	int fd;
	struct ucred peer; /* who connected (SO_PEERCRED) */
	struct ctl_client *next; /* ctl->lock */
};

static void ctl_client_done(struct ctl_client *c)
{
	struct hfs_ctl *ctl = c->ctl;

	pthread_mutex_lock(&ctl->lock);
	for (struct ctl_client **pp = &ctl->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	close(c->fd);
	free(c);
	pthread_cond_broadcast(&ctl->gone);
	pthread_mutex_unlock(&ctl->lock);
}

static void *ctl_client_main(void *arg)
{
	struct ctl_client *c = arg;
	struct jsonl_reader rd;
	cJSON *req, *resp;
	int r;

	jsonl_reader_init(&rd, c->fd);
	for (;;) {
		r = jsonl_read(&rd, &req, 60000);
		if (r == -EBADMSG) {
			resp = cJSON_CreateObject();
			cJSON_AddBoolToObject(resp, "ok", 0);
			cJSON_AddStringToObject(resp, "error", "request is not a JSON object");
		} else if (r < 0) {
			break;
		} else {
			/* handlers that act for the client read who it is from
			 * here; whatever the client sent under these names is
			 * overwritten */
			cJSON_DeleteItemFromObjectCaseSensitive(req, "_peer_uid");
			cJSON_DeleteItemFromObjectCaseSensitive(req, "_peer_gid");
			cJSON_DeleteItemFromObjectCaseSensitive(req, "_peer_pid");
			if (cJSON_IsObject(req)) {
				cJSON_AddNumberToObject(req, "_peer_uid", c->peer.uid);
				cJSON_AddNumberToObject(req, "_peer_gid", c->peer.gid);
				cJSON_AddNumberToObject(req, "_peer_pid", c->peer.pid);
			}
			resp = ctl_dispatch(c->fs, req);
			cJSON_Delete(req);
		}
		r = resp ? jsonl_write(c->fd, resp) : -ENOMEM;
		cJSON_Delete(resp);
		if (r < 0)
			break;
	}
	jsonl_reader_free(&rd);
	ctl_client_done(c);
	return NULL;
}

static void *ctl_main(void *arg)
{
	struct hfs *fs = arg;
	struct hfs_ctl *ctl = fs->ctl;
	struct pollfd p[2] = {
		{ .fd = ctl->listen_fd, .events = POLLIN },
		{ .fd = ctl->stop_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("control socket: poll: %s", strerror(errno));
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct ctl_client *c = malloc(sizeof(*c));
		pthread_t t;
		pthread_attr_t attr;
		if (!c) {
			close(fd);
			continue;
		}
		c->fs = fs;
		c->ctl = ctl;
		c->fd = fd;
		socklen_t len = sizeof(c->peer);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->peer, &len) < 0) {
			close(fd);
			free(c);
			continue;
		}
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&ctl->lock);
		c->next = ctl->clients;
		ctl->clients = c;
		pthread_mutex_unlock(&ctl->lock);
		if (pthread_create(&t, &attr, ctl_client_main, c) != 0)
			ctl_client_done(c);
		pthread_attr_destroy(&attr);
	}
}

int ctl_start(struct hfs *fs, struct herr *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct hfs_ctl *ctl;
	sigset_t block, old;
	mode_t mask;
	int r;

	if (strlen(fs->sock_path) >= sizeof(sa.sun_path))
		return err_set(e, -ENAMETOOLONG, "control socket path too long: %s",
			       fs->sock_path);
	strcpy(sa.sun_path, fs->sock_path);
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return err_set(e, -ENOMEM, "out of memory");
	pthread_mutex_init(&ctl->lock, NULL);
	pthread_cond_init(&ctl->gone, NULL);
	ctl->stop_fd = eventfd(0, EFD_CLOEXEC);
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->stop_fd < 0 || ctl->listen_fd < 0) {
		r = err_sys(e, -errno, "cannot create the control socket");
		goto fail;
	}
	unlink(fs->sock_path); /* a stale socket of a dead daemon */
	mask = umask(0177);
	r = bind(ctl->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
	r = r < 0 ? -errno : 0;
	umask(mask);
	if (r < 0) {
		err_sys(e, r, "cannot bind the control socket %s", fs->sock_path);
		goto fail;
	}
	if (listen(ctl->listen_fd, 16) < 0) {
		r = err_sys(e, -errno, "cannot listen on %s", fs->sock_path);
		goto fail_unlink;
	}
	fs->ctl = ctl;
	/* signals belong to the main thread, which ends the FUSE loop */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = -pthread_create(&ctl->thread, NULL, ctl_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		fs->ctl = NULL;
		err_sys(e, r, "cannot start the control thread");
		goto fail_unlink;
	}
	return 0;
fail_unlink:
	unlink(fs->sock_path);
fail:
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	if (ctl->stop_fd >= 0)
		close(ctl->stop_fd);
	free(ctl);
	return r;
}

void ctl_stop(struct hfs *fs)
{
	struct hfs_ctl *ctl = fs->ctl;
	uint64_t one = 1;

	if (!ctl)
		return;
	if (write(ctl->stop_fd, &one, sizeof(one)) < 0)
		log_warn("control socket: cannot wake the server thread");
	pthread_join(ctl->thread, NULL);
	/* no new clients now; wake the idle ones, let the busy ones finish
	 * their request (10 s at most: a stuck one must not keep us) */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&ctl->lock);
	for (struct ctl_client *c = ctl->clients; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (ctl->clients)
		if (pthread_cond_timedwait(&ctl->gone, &ctl->lock, &until) == ETIMEDOUT)
			break;
	int stuck = ctl->clients != NULL;
	pthread_mutex_unlock(&ctl->lock);
	if (stuck) {
		/* leave ctl (and its lock) to the stuck client */
		log_warn("control socket: a client is still being served at unmount");
		close(ctl->listen_fd);
		close(ctl->stop_fd);
		unlink(fs->sock_path);
		fs->ctl = NULL;
		return;
	}
	pthread_mutex_destroy(&ctl->lock);
	pthread_cond_destroy(&ctl->gone);
	close(ctl->listen_fd);
	close(ctl->stop_fd);
	unlink(fs->sock_path);
	fs->ctl = NULL;
	free(ctl);
}
