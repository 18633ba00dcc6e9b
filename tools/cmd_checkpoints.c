/* hermesctl checkpoints: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_checkpoints(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("checkpoints: not implemented yet");
	return HCTL_FAIL;
}
