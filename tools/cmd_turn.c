/* hermesctl turn: placeholder until its issue lands. */
#include <stdio.h>
#include "hermesctl.h"

int cmd_turn(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hctl_error("turn: not implemented yet");
	return HCTL_FAIL;
}
