/* hermesctl checkpoint: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_checkpoint(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("checkpoint: not implemented yet");
	return HCTL_FAIL;
}
