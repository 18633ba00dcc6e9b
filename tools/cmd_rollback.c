/* hermesctl rollback: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_rollback(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("rollback: not implemented yet");
	return HCTL_FAIL;
}
