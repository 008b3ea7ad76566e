/* Comparisons printed true (exceeds.h). */
#include "cli/exceeds.h"

#include <stdio.h>
#include <string.h>

const char *cli_exceeds(double value, double threshold, int at_least, int digits, char *v, char *t)
{
	int d = digits > 0 ? digits : 6;
	if (d < 4)
		d = 4;
	for (;; d++) {
		snprintf(v, CLI_NUM_LEN, "%.*g", d, value);
		snprintf(t, CLI_NUM_LEN, "%.*g", d, threshold);
		if (value == threshold || strcmp(v, t) || d >= 17)
			break;
	}
	return at_least ? ">=" : value > threshold ? ">" : "<=";
}
