/* hermesfs daemon entry point: placeholder until the filesystem lands. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "hermesfs: not implemented yet\n");
	return 1;
}
