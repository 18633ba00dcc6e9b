/* hermesctl umount: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_umount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("umount: not implemented yet");
	return HCTL_FAIL;
}
