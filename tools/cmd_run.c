/* hermesctl run: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("run: not implemented yet");
	return HCTL_FAIL;
}
