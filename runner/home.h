/* HOME isolation for jobs (TERMINAL_HOME_MODE): which HOME a job gets,
 * and in profile mode the scratch TMPDIR, the crontab stand-in first on
 * PATH and no way to the user's systemd bus. */
#pragma once

#include <stddef.h>

#include "env.h"
#include "err.h"
#include "runner.h"

/* auto, real, profile and their aliases (isolated, profile_home,
 * profile-home; host, user, real_home, real-home). */
int home_mode_parse(const char *s, enum runner_home_mode *out);
const char *home_mode_name(enum runner_home_mode m);
/* /.dockerenv, /run/.containerenv or KUBERNETES_SERVICE_HOST. */
int home_in_container(void);
/* The real home: HERMES_REAL_HOME, HOME, the passwd entry (skipping the
 * profile home), else /tmp. */
int home_real(char *out, size_t size);
/* $HERMES_HOME/home */
int home_profile(char *out, size_t size);
/* Rewrite env for mode; home_out receives the HOME the job gets. */
int home_apply(enum runner_home_mode mode, const char *crontab_shim, struct envv *env,
	       char *home_out, size_t size, struct herr *e);
