/* "VALUE > THRESHOLD" text that is true as printed (exceeds.c). */
#ifndef SANDLENS_CLI_EXCEEDS_H
#define SANDLENS_CLI_EXCEEDS_H

/* Room for one number of cli_exceeds ("%.17g" of any double). */
#define CLI_NUM_LEN 32

/* A detector's comparison for people: value into v and threshold into t
 * (each CLI_NUM_LEN bytes) with %.*g at the least precision of digits
 * (<= 0: 6; at least 4) .. 17 significant digits at which the two differ
 * as text when the numbers differ, so 0.1500001 and 0.15 are never both
 * printed "0.15". Returns the operator that makes "v OP t" true: ">=" when
 * at_least (a lower bound: a PSI trigger's value equals its threshold),
 * else ">" when value > threshold, else "<=" (a record that says otherwise
 * is shown as it is, never as a false ">"). */
const char *cli_exceeds(double value, double threshold, int at_least, int digits, char *v, char *t);

#endif
