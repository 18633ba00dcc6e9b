/* The RPC server of hermesctl code, on a libuv loop in a thread of its
 * own. A connection carries any number of calls; each answer names its
 * request's id, so calls may be pipelined or come from several threads of
 * the script on connections of their own. Fast tools answer on the loop's
 * thread; slow ones (terminal, search_files) on libuv's pool, so one of
 * them never holds up the others. A request is checked, in this order:
 * JSON, the token (constant time; a wrong one closes the connection), the
 * tool, the budget of calls. */
#include "rpc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "log.h"

struct rpc_conn;

struct rpc_server {
	uv_loop_t loop;
	uv_pipe_t listener;
	uv_async_t wake;
	uv_thread_t thread;
	char token[128];
	size_t token_len;
	const struct tool_ctx *ctx;
	int max_calls;
	atomic_int calls;
	struct rpc_conn *conns;
};

struct rpc_conn {
	uv_pipe_t pipe;
	struct rpc_server *srv;
	char *buf;
	size_t len, cap, scanned;
	int refs;    /* the pipe, and each call in flight */
	int closing;
	struct rpc_conn *prev, *next;
};

struct rpc_call {
	uv_work_t work;
	struct rpc_conn *conn;
	const struct tool_def *tool;
	cJSON *args, *id, *result;
};

struct rpc_write {
	uv_write_t req;
	struct rpc_conn *conn;
	int close_after;
	char data[];
};

static void rpc_conn_unref(struct rpc_conn *c)
{
	if (--c->refs > 0)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		c->srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->buf);
	free(c);
}

static void rpc_conn_closed(uv_handle_t *h)
{
	rpc_conn_unref((struct rpc_conn *)h);
}

static void rpc_conn_close(struct rpc_conn *c)
{
	if (c->closing)
		return;
	c->closing = 1;
	uv_close((uv_handle_t *)&c->pipe, rpc_conn_closed);
}

static void rpc_written(uv_write_t *req, int status)
{
	struct rpc_write *w = (struct rpc_write *)req;

	(void)status;
	if (w->close_after)
		rpc_conn_close(w->conn);
	rpc_conn_unref(w->conn);
	free(w);
}

/* Send {"id": id, key: val} and a newline (val and id stay the caller's). */
static void rpc_send(struct rpc_conn *c, const cJSON *id, const char *key, cJSON *val,
		     int close_after)
{
	cJSON *o;
	char *text = NULL;
	struct rpc_write *w;
	size_t n;

	if (c->closing)
		return; /* closed while the call ran: nobody to answer */
	if ((o = cJSON_CreateObject())) {
		cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
		cJSON_AddItemReferenceToObject(o, key, val);
		text = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
	}
	if (!text) {
		static const char oom[] = "{\"id\":null,\"error\":\"out of memory\"}";
		text = strdup(oom);
		if (!text) {
			rpc_conn_close(c);
			return;
		}
	}
	n = strlen(text);
	w = malloc(sizeof(*w) + n + 1);
	if (!w) {
		free(text);
		rpc_conn_close(c);
		return;
	}
	memcpy(w->data, text, n);
	w->data[n] = '\n';
	free(text);
	w->conn = c;
	w->close_after = close_after;
	c->refs++;
	uv_buf_t b = uv_buf_init(w->data, (unsigned)(n + 1));
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, rpc_written) < 0) {
		rpc_conn_unref(c);
		free(w);
		rpc_conn_close(c);
	}
}

static void rpc_send_error(struct rpc_conn *c, const cJSON *id, const char *msg, int close_after)
{
	cJSON *s = cJSON_CreateString(msg);

	rpc_send(c, id, "error", s, close_after);
	cJSON_Delete(s);
}

static int rpc_token_ok(const struct rpc_server *s, const char *t)
{
	size_t n = strlen(t);
	unsigned char d = (unsigned char)(n != s->token_len || n == 0);

	for (size_t i = 0; i < s->token_len; i++)
		d |= (unsigned char)(s->token[i] ^ (i < n ? t[i] : 0));
	return d == 0;
}

static void rpc_work(uv_work_t *req)
{
	struct rpc_call *call = req->data;

	call->result = call->tool->run(call->conn->srv->ctx, call->args);
}

static void rpc_call_answer(struct rpc_call *call)
{
	if (call->result)
		rpc_send(call->conn, call->id, "result", call->result, 0);
	else
		rpc_send_error(call->conn, call->id, "out of memory", 0);
	cJSON_Delete(call->result);
	cJSON_Delete(call->args);
	cJSON_Delete(call->id);
	rpc_conn_unref(call->conn);
	free(call);
}

static void rpc_work_done(uv_work_t *req, int status)
{
	(void)status;
	rpc_call_answer(req->data);
}

static void rpc_available(char *out, size_t size)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; tool_all[i] && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%s", i ? ", " : "", tool_all[i]->name);
}

static void rpc_line(struct rpc_conn *c, const char *line, size_t len)
{
	struct rpc_server *s = c->srv;
	cJSON *req = cJSON_ParseWithLength(line, len), *id;
	const cJSON *tok, *name, *args;
	const struct tool_def *tool;
	char msg[512], avail[256];
	struct rpc_call *call;

	if (!cJSON_IsObject(req)) {
		cJSON_Delete(req);
		rpc_send_error(c, NULL, "malformed request: not a JSON object", 0);
		return;
	}
	id = cJSON_DetachItemFromObjectCaseSensitive(req, "id");
	tok = cJSON_GetObjectItemCaseSensitive(req, "token");
	if (!cJSON_IsString(tok) || !rpc_token_ok(s, tok->valuestring)) {
		rpc_send_error(c, id, "Unauthorized RPC request", 1);
		goto out;
	}
	name = cJSON_GetObjectItemCaseSensitive(req, "tool");
	tool = cJSON_IsString(name) ? tool_find(name->valuestring) : NULL;
	if (!tool) {
		rpc_available(avail, sizeof(avail));
		snprintf(msg, sizeof(msg), "Tool '%.100s' is not available in execute_code. Available: %s",
			 cJSON_IsString(name) ? name->valuestring : "", avail);
		rpc_send_error(c, id, msg, 0);
		goto out;
	}
	args = cJSON_GetObjectItemCaseSensitive(req, "args");
	if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args)) {
		rpc_send_error(c, id, "malformed request: args must be an object", 0);
		goto out;
	}
	if (s->max_calls > 0 && atomic_fetch_add(&s->calls, 1) >= s->max_calls) {
		atomic_fetch_sub(&s->calls, 1);
		snprintf(msg, sizeof(msg), "Tool call limit reached (%d). No more tool calls allowed "
			 "in this execution.", s->max_calls);
		rpc_send_error(c, id, msg, 0);
		goto out;
	}
	if (s->max_calls <= 0)
		atomic_fetch_add(&s->calls, 1);
	if (!(call = calloc(1, sizeof(*call)))) {
		rpc_send_error(c, id, "out of memory", 0);
		goto out;
	}
	call->conn = c;
	call->tool = tool;
	call->id = id;
	id = NULL;
	call->args = args && cJSON_IsObject(args)
			     ? cJSON_DetachItemFromObjectCaseSensitive(req, "args")
			     : cJSON_CreateObject();
	c->refs++;
	if (tool->slow) {
		call->work.data = call;
		if (uv_queue_work(&s->loop, &call->work, rpc_work, rpc_work_done) == 0)
			goto out;
	}
	call->result = tool->run(s->ctx, call->args);
	rpc_call_answer(call);
out:
	cJSON_Delete(id);
	cJSON_Delete(req);
}

static void rpc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	struct rpc_conn *c = (struct rpc_conn *)h;

	(void)suggested;
	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? c->cap * 2 : 131072;
		char *nb = realloc(c->buf, cap);
		if (!nb) {
			*b = uv_buf_init(NULL, 0);
			return;
		}
		c->buf = nb;
		c->cap = cap;
	}
	*b = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void rpc_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
	struct rpc_conn *c = (struct rpc_conn *)st;
	size_t start = 0;

	(void)b;
	if (n < 0) {
		rpc_conn_close(c);
		return;
	}
	c->len += (size_t)n;
	c->refs++; /* a call may close the connection under us */
	for (size_t i = c->scanned; i < c->len && !c->closing; i++) {
		if (c->buf[i] != '\n')
			continue;
		if (i > start)
			rpc_line(c, c->buf + start, i - start);
		start = i + 1;
	}
	if (start > 0) {
		memmove(c->buf, c->buf + start, c->len - start);
		c->len -= start;
	}
	c->scanned = c->len;
	if (c->len > RPC_LINE_MAX && !c->closing) {
		rpc_send_error(c, NULL, "request over 16 MiB: connection closed", 1);
		uv_read_stop(st);
	}
	/* a big buffer no longer needed goes back */
	if (c->len == 0 && c->cap > ((size_t)1 << 20)) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
	rpc_conn_unref(c);
}

static void rpc_accept(uv_stream_t *l, int status)
{
	struct rpc_server *s = l->data;
	struct rpc_conn *c;

	if (status < 0 || !(c = calloc(1, sizeof(*c))))
		return;
	c->srv = s;
	c->refs = 1;
	uv_pipe_init(&s->loop, &c->pipe, 0);
	if (uv_accept(l, (uv_stream_t *)&c->pipe) < 0) {
		uv_close((uv_handle_t *)&c->pipe, (uv_close_cb)free);
		return;
	}
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	uv_read_start((uv_stream_t *)&c->pipe, rpc_alloc, rpc_read);
}

static void rpc_wake(uv_async_t *a)
{
	struct rpc_server *s = a->data;

	uv_close((uv_handle_t *)&s->listener, NULL);
	for (struct rpc_conn *c = s->conns; c; c = c->next)
		rpc_conn_close(c);
	uv_close((uv_handle_t *)&s->wake, NULL);
}

static void rpc_main(void *arg)
{
	struct rpc_server *s = arg;

	uv_run(&s->loop, UV_RUN_DEFAULT);
}

int rpc_start(const char *sock_path, const char *token, const struct tool_ctx *ctx,
	      int max_calls, struct rpc_server **out, struct herr *e)
{
	struct rpc_server *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return err_set(e, -ENOMEM, "out of memory");
	snprintf(s->token, sizeof(s->token), "%s", token);
	s->token_len = strlen(s->token);
	s->ctx = ctx;
	s->max_calls = max_calls;
	if ((r = uv_loop_init(&s->loop)) < 0) {
		free(s);
		return err_set(e, r, "cannot start the RPC loop: %s", uv_strerror(r));
	}
	uv_pipe_init(&s->loop, &s->listener, 0);
	s->listener.data = s;
	uv_async_init(&s->loop, &s->wake, rpc_wake);
	s->wake.data = s;
	r = uv_pipe_bind(&s->listener, sock_path);
	if (r == 0 && chmod(sock_path, 0600) < 0)
		r = -errno;
	if (r == 0)
		r = uv_listen((uv_stream_t *)&s->listener, 128, rpc_accept);
	if (r == 0)
		r = uv_thread_create(&s->thread, rpc_main, s);
	if (r < 0) {
		uv_close((uv_handle_t *)&s->listener, NULL);
		uv_close((uv_handle_t *)&s->wake, NULL);
		uv_run(&s->loop, UV_RUN_DEFAULT);
		uv_loop_close(&s->loop);
		free(s);
		return err_set(e, r, "cannot listen on %s: %s", sock_path, uv_strerror(r));
	}
	*out = s;
	return 0;
}

int rpc_stop(struct rpc_server *s)
{
	int calls;

	if (!s)
		return 0;
	uv_async_send(&s->wake);
	uv_thread_join(&s->thread);
	if (uv_loop_close(&s->loop) == UV_EBUSY)
		log_warn("code: the RPC loop closed with handles still open");
	calls = atomic_load(&s->calls);
	free(s);
	return calls;
}
