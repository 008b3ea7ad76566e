/* docs/CONFIG.md (and a module's own docs/<M>.md) against every module's
 * config declaration, both ways: each declared key (and <module>.enabled)
 * has a row `<module>.<key>` with its declared default; each documented
 * row of a registered module's section is declared. Also: every declared
 * default parses (sl_config_defaults aborts otherwise). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/config.h"
#include "agent/module.h"

struct row {
	char key[128];
	char def[256];
};

/* The table rows "| `key` | default | ..." of a markdown file. */
static size_t read_rows(const char *path, struct row *rows, size_t max, char **text)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	size_t n = 0, tl = 0;

	if (!f)
		return 0;
	*text = calloc(1, 1 << 20);
	while (fgets(line, sizeof(line), f)) {
		size_t ll = strlen(line);
		if (tl + ll < (1 << 20) - 1) {
			memcpy(*text + tl, line, ll);
			tl += ll;
		}
		if (strncmp(line, "| `", 3) || n >= max)
			continue;
		char *k = line + 3, *ke = strchr(k, '`');
		if (!ke)
			continue;
		*ke = 0;
		char *d = strchr(ke + 1, '|');
		if (!d)
			continue;
		d++;
		char *de = strchr(d, '|');
		if (!de)
			continue;
		*de = 0;
		while (*d == ' ')
			d++;
		size_t dl = strlen(d);
		while (dl && d[dl - 1] == ' ')
			d[--dl] = 0;
		if (dl >= 2 && d[0] == '`' && d[dl - 1] == '`') { /* `x` -> x */
			d[dl - 1] = 0;
			d++;
		}
		snprintf(rows[n].key, sizeof(rows[n].key), "%.120s", k);
		snprintf(rows[n].def, sizeof(rows[n].def), "%.250s", d);
		n++;
	}
	fclose(f);
	return n;
}

static const struct row *find(const struct row *rows, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
}

static void every_key_documented_both_ways(void **state)
{
	(void)state;
	static struct row rows[1024];
	char *text[2] = {NULL, NULL};
	size_t n = read_rows("docs/CONFIG.md", rows, 1024, &text[0]);
	int bad = 0;

	assert_true(n > 20); /* cwd = project root (tests/run-unit.sh) */
	for (unsigned m = 0; m < sl_registry_count; m++) {
		const struct sl_module_ops *ops = sl_registry[m];
		size_t nm = n;
		char key[128];
		/* a module's own doc may hold its rows */
		if (ops->doc && strcmp(ops->doc, "docs/CONFIG.md") && strcmp(ops->doc, "docs/ARCHITECTURE.md")) {
			free(text[1]);
			text[1] = NULL;
			nm = n + read_rows(ops->doc, rows + n, 1024 - n, &text[1]);
		}
		snprintf(key, sizeof(key), "%s.enabled", ops->name);
		const struct row *r = find(rows, nm, key);
		if (!r || strcmp(r->def, "true")) {
			print_error("%s: no row with default `true`\n", key);
			bad = 1;
		}
		for (unsigned k = 0; k < ops->config.nkeys; k++) {
			const struct sl_cfg_key *ck = &ops->config.keys[k];
			snprintf(key, sizeof(key), "%s.%s", ops->name, ck->name);
			r = find(rows, nm, key);
			if (!r) {
				print_error("%s: declared, not documented (docs/CONFIG.md or %s)\n", key, ops->doc);
				bad = 1;
				continue;
			}
			if (ck->type == SL_CFG_STRLIST) {
				/* a list's default: every item quoted somewhere in the docs */
				for (const char *p = ck->def; *p;) {
					size_t l = strcspn(p, "\n");
					char item[80];
					snprintf(item, sizeof(item), "`%.*s`", (int)l, p);
					if (!strstr(text[0], item) && !(text[1] && strstr(text[1], item))) {
						print_error("%s: default item %s not documented\n", key, item);
						bad = 1;
					}
					p += l + (p[l] == '\n');
				}
			} else if (strcmp(r->def, ck->def)) {
				print_error("%s: documented default '%s', declared '%s'\n", key, r->def, ck->def);
				bad = 1;
			}
			if (!ck->doc || !*ck->doc) {
				print_error("%s: declared without a doc line\n", key);
				bad = 1;
			}
		}
		/* documented rows of this module's section are declared */
		for (size_t i = 0; i < nm; i++) {
			size_t pl = strlen(ops->name);
			if (strncmp(rows[i].key, ops->name, pl) || rows[i].key[pl] != '.')
				continue;
			const char *leaf = rows[i].key + pl + 1;
			int found = !strcmp(leaf, "enabled");
			for (unsigned k = 0; k < ops->config.nkeys && !found; k++)
				found = !strcmp(ops->config.keys[k].name, leaf);
			if (!found) {
				print_error("%s: documented, not declared by module %s\n", rows[i].key, ops->name);
				bad = 1;
			}
		}
	}
	free(text[0]);
	free(text[1]);
	if (bad)
		fail_msg("docs/CONFIG.md and the module declarations disagree (above)");
}

/* Each declared default parses with the file's parser: sl_config_defaults
 * aborts on one that does not; and a file giving every default back
 * explicitly loads to the same config. */
static void defaults_parse(void **state)
{
	(void)state;
	static struct sl_config c, d;
	char y[16384], err[256];
	size_t o = 0;

	sl_config_defaults(&c);
	for (unsigned m = 0; m < sl_registry_count; m++) {
		const struct sl_module_ops *ops = sl_registry[m];
		o += (size_t)snprintf(y + o, sizeof(y) - o, "%s:\n  enabled: true\n", ops->name);
		for (unsigned k = 0; k < ops->config.nkeys; k++) {
			const struct sl_cfg_key *ck = &ops->config.keys[k];
			if (ck->type == SL_CFG_STRLIST) {
				o += (size_t)snprintf(y + o, sizeof(y) - o, "  %s: [", ck->name);
				for (const char *p = ck->def; *p;) {
					size_t l = strcspn(p, "\n");
					o += (size_t)snprintf(y + o, sizeof(y) - o, "%s\"%.*s\"", p == ck->def ? "" : ", ",
							      (int)l, p);
					p += l + (p[l] == '\n');
				}
				o += (size_t)snprintf(y + o, sizeof(y) - o, "]\n");
			} else {
				o += (size_t)snprintf(y + o, sizeof(y) - o, "  %s: \"%s\"\n", ck->name, ck->def);
			}
		}
	}
	assert_true(o < sizeof(y));
	sl_config_defaults(&d);
	if (sl_config_load_buf(&d, "defaults.yaml", y, o, err, sizeof(err)))
		fail_msg("%s\n%s", err, y);
	assert_memory_equal(c.mod_store, d.mod_store, sizeof(c.mod_store));
}

/* The unit of a plain number (issue 16): docs/CONFIG.md's "plain seconds"
 * and "plain nanoseconds" lists name every duration key of the agent in
 * the list of the unit the loader reads it in (sl_config_duration_key),
 * and nothing else; a module key named there is of that type. */
static int listed(const char *list, const char *key)
{
	char w[160];
	snprintf(w, sizeof(w), "`%s`", key);
	return strstr(list, w) != NULL;
}

/* the text of the bullet "- **plain WHAT**: ..." up to the next bullet or
 * blank line */
static char *bullet(const char *doc, const char *what)
{
	char head[64];
	snprintf(head, sizeof(head), "- **plain %s**:", what);
	const char *p = strstr(doc, head);
	if (!p)
		return NULL;
	const char *e = p + strlen(head);
	while (*e && !(e[0] == '\n' && (e[1] == '-' || e[1] == '\n')))
		e++;
	return strndup(p, (size_t)(e - p));
}

static void plain_number_units_documented(void **state)
{
	(void)state;
	static struct row rows[8];
	char *doc = NULL;
	read_rows("docs/CONFIG.md", rows, 8, &doc);
	assert_non_null(doc);
	char *sec = bullet(doc, "seconds"), *nsec = bullet(doc, "nanoseconds");
	if (!sec || !nsec)
		fail_msg("docs/CONFIG.md lacks the '- **plain seconds**:' / '- **plain nanoseconds**:' lists");
	int bad = 0;
	const char *name, *unit;
	size_t n = 0;
	for (size_t i = 0; !sl_config_duration_key(i, &name, &unit); i++, n++) {
		int s = listed(sec, name), ns = listed(nsec, name);
		if (!strcmp(unit, "s") ? (!s || ns) : (!ns || s)) {
			print_error("%s: a plain number is %s; docs/CONFIG.md lists it %s\n", name,
				    !strcmp(unit, "s") ? "seconds" : "nanoseconds",
				    s && ns ? "under both" : s ? "as plain seconds" : ns ? "as plain nanoseconds" : "nowhere");
			bad = 1;
		}
	}
	assert_true(n >= 10);
	for (unsigned m = 0; m < sl_registry_count; m++) {
		const struct sl_module_ops *ops = sl_registry[m];
		for (unsigned k = 0; k < ops->config.nkeys; k++) {
			const struct sl_cfg_key *ck = &ops->config.keys[k];
			char key[128];
			snprintf(key, sizeof(key), "%s.%s", ops->name, ck->name);
			if ((listed(sec, key) && ck->type != SL_CFG_DURATION_S) ||
			    (listed(nsec, key) && ck->type != SL_CFG_DURATION_NS)) {
				print_error("%s: listed under the wrong unit in docs/CONFIG.md\n", key);
				bad = 1;
			}
		}
	}
	free(sec);
	free(nsec);
	free(doc);
	if (bad)
		fail_msg("docs/CONFIG.md's plain-number units disagree with the loader");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_key_documented_both_ways),
		cmocka_unit_test(defaults_parse),
		cmocka_unit_test(plain_number_units_documented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
