/* Helpers shared by the commands that work on a tree's checkpoint store
 * (checkpoint, checkpoints, rollback): finding the tree, opening its
 * store with the config, validating paths given on the command line. */
#pragma once

#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "store.h"

/* The tree for -C DIR (NULL: the cwd): the nearest ancestor of DIR that has
 * a store, else DIR itself. *has_store tells which. dir_out receives DIR
 * resolved (relative paths on the command line start there). */
int hctl_find_tree(const char *dir, char tree[PATH_MAX], char dir_out[PATH_MAX],
		   int *has_store);
/* Load the config and open (create when create is set) the tree's store.
 * Prints the error; returns an exit code. */
int hctl_open_store(const char *tree, struct config **cfg, struct store **st);
/* A command-line path as a path relative to the tree: relative to dir,
 * inside the tree after resolving ".." and symlinks of its parents.
 * Prints why not; returns 0 or an exit code. */
int hctl_tree_relpath(const char *tree, const char *dir, const char *arg, char *out,
		      size_t size);
/* Exit code for a negative errno coming from the store. */
int hctl_exit_for(int err);
/* A progress line on a terminal (store_progress_fn). */
void hctl_progress(void *arg, size_t files, unsigned long long bytes);
/* Process description of our caller for the checkpoint's "who". */
void hctl_caller(struct ckpt_proc *p);
