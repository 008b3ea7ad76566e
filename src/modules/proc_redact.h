/* Argv redaction (proc.redact_args, docs/CONFIG.md "Argv redaction"):
 * secrets in exec argv are replaced by "***" before the event is built, so
 * neither the store nor any API answer ever holds them.
 *
 * Pattern forms (matching is ASCII case-insensitive unless noted):
 *   "NAME=" / "NAME:"  (ends in '=' or ':') an argument containing NAME= at
 *                      its start or right after a character that is not a
 *                      letter or digit ("password=" matches password=x,
 *                      --password=x, --db-password=x, DB_PASSWORD=x,
 *                      ?password=x): what follows the pattern, to the end
 *                      of the argument, becomes "***".
 *   "NAME*"            (ends in '*') an argument that starts with NAME and
 *                      has more after it: the rest becomes "***". Case
 *                      SENSITIVE (short options: mysql -pSECRET vs -P 3306).
 *   anything else      a flag: an argument equal to it ("--password"): the
 *                      NEXT argument becomes "***".
 */
#ifndef SANDLENS_MODULES_PROC_REDACT_H
#define SANDLENS_MODULES_PROC_REDACT_H

#include <jansson.h>
#include <stddef.h>

/* The default proc.redact_args (docs/CONFIG.md), one pattern a line (the
 * SL_CFG_STRLIST default form). */
#define SL_REDACT_DEFAULTS                                                                         \
	"password=\npasswd=\ntoken=\nsecret=\napi-key=\napi_key=\napikey=\nauthorization:\n--password\n" \
	"--passwd\n--token\n--secret\n--api-key"

/* Split the NUL-separated argument block argv[0..len) into a JSON array of
 * strings (as sl_proc_argv_json) applying the npat patterns pat[] (each a
 * NUL-terminated string; empty ones are ignored). *redacted (may be NULL)
 * is set to 1 when some argument was changed, else 0. Returns a new array,
 * NULL only when out of memory. */
json_t *sl_proc_argv_json_redact(const char *argv, size_t len, const char (*pat)[64], unsigned npat,
				 int *redacted);

/* Is p a valid pattern? 0, or -1 with a reason in why (for the config
 * error message): empty, a bare "=", ":" or "*", or bytes outside printable
 * ASCII. */
int sl_redact_pattern_check(const char *p, const char **why);

#endif
