/* Daemon and tool logging: one line per message, safe from many threads. */
#pragma once

enum log_level { LOG_ERR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Open (append) a log file; path NULL logs to stderr only. */
int log_open(const char *path, enum log_level level, int also_stderr);
void log_set_level(enum log_level level);
int log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_close(void);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                \
	do {                                          \
		if (log_enabled(LOG_DEBUG))           \
			log_msg(LOG_DEBUG, __VA_ARGS__); \
	} while (0)
