/* The local backend: the job runs on this machine in its own session with
 * stdin on /dev/null, its output captured through libuv pipes, and on
 * timeout or exit everything it left behind is TERMed, then KILLed. */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "cleanup.h"
#include "log.h"
#include "output.h"
#include "proctree.h"

#define LOCAL_POLL_MS 10
#define LOCAL_WATCH_MS 100
#define LOCAL_KILL_WAIT_MS 5000
/* After the tree is gone, how long a pipe may stay open (an fd handed to
 * a process outside the tree) before we stop reading it. */
#define LOCAL_PIPE_LINGER_MS 2000

enum local_phase { LOCAL_RUNNING, LOCAL_TERM_SENT, LOCAL_KILL_SENT, LOCAL_GONE };

struct local_run {
	uv_loop_t loop;
	uv_process_t proc;
	uv_pipe_t out, err;
	uv_timer_t deadline, reap, watch;
	int watch_fd;        /* a pipe we stream to, checked for a gone reader */
	uv_signal_t sigs[3]; /* INT, TERM, HUP sent to the runner */
	struct output_cap cap_out, cap_err;
	pid_t pid;
	int exited, timed_out, interrupted, pipes_open, reap_active;
	int64_t exit_status;
	int term_signal;
	enum local_phase phase;
	uint64_t t_start, t_exit, t_term, t_kill, t_gone; /* uv_hrtime ns */
	double grace;
	char buf[65536];
};

static void local_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	struct local_run *run = h->loop->data;

	(void)suggested;
	b->base = run->buf;
	b->len = sizeof(run->buf);
}

static void local_stop(struct local_run *run);
static void local_terminate(struct local_run *run);

static void local_pipe_closed(uv_handle_t *h)
{
	struct local_run *run = h->loop->data;

	/* The last pipe closing after the tree is gone ends the loop now,
	 * not at the next reap tick. */
	if (--run->pipes_open == 0 && run->phase == LOCAL_GONE)
		local_stop(run);
}

static void local_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct local_run *run = s->loop->data;
	struct output_cap *cap = s == (uv_stream_t *)&run->out ? &run->cap_out : &run->cap_err;

	if (n > 0) {
		output_feed(cap, b->base, (size_t)n);
		/* Whoever read our output left: end the job as a pipe would. */
		if (cap->broken && !run->exited && !run->interrupted) {
			run->interrupted = SIGPIPE;
			local_terminate(run);
		}
		return;
	}
	if (n < 0 && !uv_is_closing((uv_handle_t *)s))
		uv_close((uv_handle_t *)s, local_pipe_closed);
}

static void local_stop(struct local_run *run)
{
	if (!uv_is_closing((uv_handle_t *)&run->deadline))
		uv_close((uv_handle_t *)&run->deadline, NULL);
	if (!uv_is_closing((uv_handle_t *)&run->reap))
		uv_close((uv_handle_t *)&run->reap, NULL);
	if (!uv_is_closing((uv_handle_t *)&run->watch))
		uv_close((uv_handle_t *)&run->watch, NULL);
	for (int i = 0; i < 3; i++)
		if (!uv_is_closing((uv_handle_t *)&run->sigs[i]))
			uv_close((uv_handle_t *)&run->sigs[i], NULL);
}

/* Signal the tree and watch it go: TERM, grace, KILL. */
static void local_reap_tick(uv_timer_t *t)
{
	struct local_run *run = t->loop->data;
	uint64_t now = uv_hrtime();
	long live;

	if (run->phase == LOCAL_TERM_SENT &&
	    (double)(now - run->t_term) / 1e9 >= run->grace) {
		proctree_signal(run->exited ? 0 : run->pid, SIGKILL);
		run->phase = LOCAL_KILL_SENT;
		run->t_kill = now;
		log_debug("local: grace over, sent KILL to the tree of %d", (int)run->pid);
	}
	live = proctree_descendants(run->exited ? 0 : run->pid, NULL, 0);
	if (run->phase == LOCAL_KILL_SENT && live > 0) {
		proctree_signal(run->exited ? 0 : run->pid, SIGKILL);
		/* Uninterruptible sleep (a dead network or FUSE mount) can
		 * outlast KILL: report what we have rather than hang. */
		if ((now - run->t_kill) / 1000000 >= LOCAL_KILL_WAIT_MS) {
			log_warn("local: %ld process(es) of the job ignore KILL (stuck in the "
				 "kernel?); giving up on them", live);
			live = 0;
			if (!run->exited) {
				run->exited = 1;
				run->t_exit = now;
				run->term_signal = SIGKILL;
				uv_close((uv_handle_t *)&run->proc, NULL);
			}
		}
	}
	if (!run->exited || live > 0)
		return;
	if (run->phase != LOCAL_GONE) {
		run->phase = LOCAL_GONE;
		run->t_gone = now;
	}
	if (run->pipes_open == 0) {
		local_stop(run);
		return;
	}
	if ((now - run->t_gone) / 1000000 >= LOCAL_PIPE_LINGER_MS) {
		log_warn("local: output pipes still open after the job's processes ended; "
			 "closing them");
		if (!uv_is_closing((uv_handle_t *)&run->out))
			uv_close((uv_handle_t *)&run->out, local_pipe_closed);
		if (!uv_is_closing((uv_handle_t *)&run->err))
			uv_close((uv_handle_t *)&run->err, local_pipe_closed);
	}
}

static void local_start_reaping(struct local_run *run)
{
	if (run->reap_active)
		return;
	run->reap_active = 1;
	uv_timer_start(&run->reap, local_reap_tick, LOCAL_POLL_MS, LOCAL_POLL_MS);
}

static void local_terminate(struct local_run *run)
{
	if (run->phase == LOCAL_TERM_SENT || run->phase == LOCAL_KILL_SENT)
		return; /* already on its way down */
	run->phase = LOCAL_TERM_SENT;
	run->t_term = uv_hrtime();
	proctree_signal(run->exited ? 0 : run->pid, SIGTERM);
	local_start_reaping(run);
}

static void local_deadline(uv_timer_t *t)
{
	struct local_run *run = t->loop->data;

	if (run->exited)
		return;
	run->timed_out = 1;
	log_debug("local: job %d timed out, sending TERM to its tree", (int)run->pid);
	local_terminate(run);
}

/* Past the head, nothing is written to the stream until the end, so a
 * reader that left (e.g. "| head -1") is noticed by polling its pipe. */
static void local_watch(uv_timer_t *t)
{
	struct local_run *run = t->loop->data;
	struct pollfd pfd = { .fd = run->watch_fd, .events = 0 };

	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP))) {
		uv_timer_stop(t);
		run->cap_out.fd = -1;
		run->cap_out.broken = 1;
		if (!run->exited && !run->interrupted) {
			run->interrupted = SIGPIPE;
			local_terminate(run);
		}
	}
}

static void local_watch_start(struct local_run *run, int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return;
	run->watch_fd = fd;
	uv_timer_start(&run->watch, local_watch, LOCAL_WATCH_MS, LOCAL_WATCH_MS);
}

/* The runner was told to stop: the job's tree goes first, then we report. */
static void local_signal(uv_signal_t *h, int sig)
{
	struct local_run *run = h->loop->data;

	if (run->exited || run->interrupted)
		return;
	run->interrupted = sig;
	log_debug("local: got signal %d, terminating job %d", sig, (int)run->pid);
	local_terminate(run);
}

static void local_exit(uv_process_t *p, int64_t status, int sig)
{
	struct local_run *run = p->loop->data;

	run->exited = 1;
	run->exit_status = status;
	run->term_signal = sig;
	run->t_exit = uv_hrtime();
	uv_timer_stop(&run->deadline);
	uv_close((uv_handle_t *)p, NULL);
	if (run->phase != LOCAL_RUNNING) {
		local_start_reaping(run);
		return;
	}
	/* The job is over: whatever it left running goes too. */
	if (proctree_descendants(0, NULL, 0) > 0) {
		log_debug("local: job %d left processes behind, terminating them", (int)run->pid);
		local_terminate(run);
		return;
	}
	run->phase = LOCAL_GONE;
	run->t_gone = run->t_exit;
	if (run->pipes_open == 0)
		local_stop(run);
	else
		local_start_reaping(run);
}

static int local_prepare(void **state, struct herr *e)
{
	int r = proctree_become_subreaper();

	*state = NULL;
	if (r < 0)
		return err_sys(e, r, "cannot become the subreaper of the job's processes");
	/* Descriptors the runner inherited (its caller's sockets, files) are
	 * not the job's business. */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		log_debug("local: close_range: %s", strerror(errno));
	return 0;
}

static void local_fill(struct local_run *run, struct runner_result *res)
{
	res->pid = run->pid;
	res->timed_out = run->timed_out;
	res->signal = run->term_signal;
	res->duration = (double)(run->t_exit - run->t_start) / 1e9;
	res->interrupted = run->interrupted;
	if (run->timed_out)
		res->exit_code = 124;
	else if (run->interrupted)
		res->exit_code = 128 + run->interrupted;
	else if (run->term_signal)
		res->exit_code = 128 + run->term_signal;
	else
		res->exit_code = (int)run->exit_status;
}

/* The guard: if the runner is killed outright (SIGKILL, the OOM killer),
 * none of its cleanup runs and the job would go on alone. A forked guard
 * learns of the runner's death by PR_SET_PDEATHSIG and kills the job's
 * session and process group (a process that left both with setsid of its
 * own is out of reach: the runner, its subreaper, is gone). Stopped with
 * SIGKILL when the run ends normally. Returns its pid, or -1. */
static pid_t local_guard_start(pid_t sid)
{
	pid_t parent = getpid(), pid;
	sigset_t set, old;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid = fork();
	if (pid != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid < 0 ? -1 : pid;
	}
	/* hold nothing of the runner's: a caller reading its output must
	 * see the end of it when the runner exits */
	if (syscall(SYS_close_range, 0U, ~0U, 0) < 0)
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	if (getppid() == parent)
		while (sigwait(&set, &sig) != 0)
			;
	proctree_kill_session(sid);
	_exit(0);
}

static void local_guard_stop(pid_t guard)
{
	if (guard <= 0)
		return;
	kill(guard, SIGKILL);
	while (waitpid(guard, NULL, 0) < 0 && errno == EINTR)
		;
}

static int local_exec(void *state, const struct runner_exec *x, struct runner_result *res,
		      struct herr *e)
{
	struct local_run *run;
	uv_process_options_t opt = { 0 };
	uv_stdio_container_t stdio[3];
	int r;

	(void)state;
	if (!(run = calloc(1, sizeof(*run))))
		return err_set(e, -ENOMEM, "out of memory");
	run->grace = x->limits.grace;
	if ((r = uv_loop_init(&run->loop)) < 0) {
		free(run);
		return err_set(e, r, "cannot start the event loop: %s", uv_strerror(r));
	}
	run->loop.data = run;
	if (output_init_headtail(&run->cap_out, x->limits.stdout_max, x->stream_stdout_fd) < 0 ||
	    output_init_head(&run->cap_err, x->limits.stderr_max, x->stream_stderr_fd) < 0) {
		r = err_set(e, -ENOMEM, "out of memory");
		goto out_caps;
	}
	if (x->spill_stdout_fd >= 0)
		output_spill(&run->cap_out, x->spill_stdout_fd, x->spill_max);
	uv_pipe_init(&run->loop, &run->out, 0);
	uv_pipe_init(&run->loop, &run->err, 0);
	uv_timer_init(&run->loop, &run->deadline);
	uv_timer_init(&run->loop, &run->reap);
	uv_timer_init(&run->loop, &run->watch);
	for (int i = 0; i < 3; i++)
		uv_signal_init(&run->loop, &run->sigs[i]);
	run->pipes_open = 2;
	stdio[0].flags = UV_IGNORE; /* libuv puts /dev/null there */
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&run->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&run->err;
	opt.exit_cb = local_exit;
	opt.file = x->argv[0];
	opt.args = (char **)x->argv;
	opt.env = (char **)x->envp;
	opt.cwd = x->cwd;
	opt.flags = UV_PROCESS_DETACHED; /* setsid: its own session and group */
	opt.stdio_count = 3;
	opt.stdio = stdio;
	run->t_start = uv_hrtime();
	r = uv_spawn(&run->loop, &run->proc, &opt);
	if (r < 0) {
		char msg[512];
		int len = snprintf(msg, sizeof(msg), "hermesctl: cannot run %s: %s\n", x->argv[0],
				   uv_strerror(r));
		output_feed(&run->cap_err, msg, (size_t)len);
		uv_close((uv_handle_t *)&run->proc, NULL);
		uv_close((uv_handle_t *)&run->out, local_pipe_closed);
		uv_close((uv_handle_t *)&run->err, local_pipe_closed);
		local_stop(run);
		uv_run(&run->loop, UV_RUN_DEFAULT);
		run->t_exit = uv_hrtime();
		run->exit_status = r == UV_ENOENT ? 127 : 126;
	} else {
		run->pid = run->proc.pid;
		/* not a leftover of the job: never counted nor signalled */
		pid_t guard = local_guard_start(run->pid);
		proctree_ignore(guard);
		uv_read_start((uv_stream_t *)&run->out, local_alloc, local_read);
		uv_read_start((uv_stream_t *)&run->err, local_alloc, local_read);
		local_watch_start(run, x->stream_stdout_fd);
		uv_signal_start(&run->sigs[0], local_signal, SIGINT);
		uv_signal_start(&run->sigs[1], local_signal, SIGTERM);
		uv_signal_start(&run->sigs[2], local_signal, SIGHUP);
		uv_timer_start(&run->deadline, local_deadline,
			       (uint64_t)(x->limits.timeout * 1000.0 + 0.5), 0);
		uv_run(&run->loop, UV_RUN_DEFAULT);
		local_guard_stop(guard);
		proctree_ignore(0);
	}
	local_fill(run, res);
	r = output_finish(&run->cap_out, &res->out);
	if (output_finish(&run->cap_err, &res->err) < 0 || r < 0)
		r = err_set(e, -ENOMEM, "out of memory");
	else
		r = 0;
	goto out_loop;
out_caps:
	free(run->cap_out.head);
	free(run->cap_out.tail);
	free(run->cap_err.head);
	free(run->cap_err.tail);
out_loop:
	if (uv_loop_close(&run->loop) == UV_EBUSY)
		log_warn("local: event loop closed with handles still open");
	free(run);
	return r;
}

static int local_copy(const char *from, const char *to, struct herr *e)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return err_sys(e, -errno, "cannot open %s", from);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return err_sys(e, -errno, "cannot create %s", to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0)
				return err_sys(e, -errno, "cannot write %s", to);
			off += w;
		}
	if (n < 0)
		return err_sys(e, -errno, "cannot read %s", from);
	return 0;
}

static int local_copy_in(void *state, const char *host_path, const char *dest, struct herr *e)
{
	(void)state;
	return local_copy(host_path, dest, e);
}

static int local_copy_out(void *state, const char *src, const char *host_path, struct herr *e)
{
	(void)state;
	return local_copy(src, host_path, e);
}

static void local_teardown(void *state)
{
	(void)state;
}

const struct runner_backend backend_local = {
	.name = "local",
	.prepare = local_prepare,
	.exec = local_exec,
	.copy_in = local_copy_in,
	.copy_out = local_copy_out,
	.teardown = local_teardown,
};
