/* The width the output may use (commands.h cli_term_width). */
#include "cli/commands.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

int cli_term_width(void)
{
	const char *e = getenv("COLUMNS");
	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);
		if (!*end && v >= 20 && v <= 10000)
			return (int)v;
	}
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 0;
}
