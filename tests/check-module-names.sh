#!/bin/sh
# Module contract (src/agent/module.h): no file outside a module's own
# files (bpf/<m>.bpf.c, include/sandlens/<m>.h, src/modules/<m>*,
# docs/<M>.md, tests) and the registry (src/modules/registry.c) names a
# module: not its header, its skeleton, its symbols (sl_<m>_..., <m>_bpf)
# nor its name as a string. Modules are the entries of the registry.
# Run by `make all`; exit 1 listing every offending line.
# src/cli is a client of the API (it may name routes such as /api/v1/sched
# until it reads everything from the schema route; docs/CLI.md).
cd "$(dirname "$0")/.." || exit 2
mods=$(sed -n 's/^extern const struct sl_module_ops sl_\([a-z0-9]*\)_module;.*/\1/p' src/modules/registry.c)
[ -n "$mods" ] || { echo "check-module-names: no modules in src/modules/registry.c" >&2; exit 2; }
bad=0
for m in $mods; do
	pat="modules/$m[a-z_]*\\.h|sandlens/$m\\.h|${m}\\.skel\\.h|\\bsl_${m}_[a-z]|\\b${m}_bpf\\b|\"$m\""
	hits=$(grep -rnE "$pat" src include bpf --include='*.c' --include='*.h' 2>/dev/null |
		grep -vE "^(src/modules/${m}[^:]*|src/modules/registry\\.c|include/sandlens/${m}\\.h|bpf/${m}\\.bpf\\.c|src/cli/[^:]*):")
	if [ -n "$hits" ]; then
		echo "check-module-names: module '$m' named outside its files:" >&2
		echo "$hits" >&2
		bad=1
	fi
done
exit $bad
