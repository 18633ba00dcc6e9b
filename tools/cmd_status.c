/* hermesctl status: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_status(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("status: not implemented yet");
	return HCTL_FAIL;
}
