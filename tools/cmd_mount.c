/* hermesctl mount: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_mount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("mount: not implemented yet");
	return HCTL_FAIL;
}
