/* The RPC server of hermesctl code: newline-delimited JSON over a Unix
 * socket (or any stream: rpc_serve_fd), requests
 * {"id", "tool", "args", "token"}, answers {"id", "result"} or
 * {"id", "error"}; many connections and calls in flight at once. */
#pragma once

#include "err.h"
#include "tools/tools.h"

#define RPC_LINE_MAX ((size_t)16 << 20) /* a longer request closes its connection */

struct rpc_server;

/* Listen on sock_path and serve in a thread of its own until rpc_stop. */
int rpc_start(const char *sock_path, const char *token, const struct tool_ctx *ctx,
	      int max_calls, struct rpc_server **out, struct herr *e);
/* Stop serving (calls in flight finish first) and free; the calls made. */
int rpc_stop(struct rpc_server *s);
