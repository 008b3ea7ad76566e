#!/bin/bash
# proc.redact_args with its default patterns (docs/CONFIG.md): secrets on a
# command line are masked before anything is stored — the event's argv has
# "***" in their place and args_redacted true, the secret is in no event and
# nowhere in the store file; an exec with nothing to mask is stored as it was.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd sqlite3
sl_agent_start

MARK="s3cr3t$RANDOM$RANDOM"
/bin/sh -c 'exit 0' sh "--db-password=$MARK" --token "tok$MARK" "plain-$MARK-arg"
ev=$(sl_wait_events "type=exec&limit=1000" "map(select(.argv != null and (.argv | index(\"plain-$MARK-arg\")))) | .[0]")
note "the exec as stored: $(jq -c '{argv, args_redacted}' <<<"$ev")"
assert_eq "argv after redaction" \
	"[\"/bin/sh\",\"-c\",\"exit 0\",\"sh\",\"--db-password=***\",\"--token\",\"***\",\"plain-$MARK-arg\"]" \
	"$(jq -c .argv <<<"$ev")"
assert_eq "args_redacted" true "$(jq -r .args_redacted <<<"$ev")"

/bin/sh -c 'exit 0' sh "harmless-$MARK"
ev2=$(sl_wait_events "type=exec&limit=1000" "map(select(.argv != null and (.argv | index(\"harmless-$MARK\")))) | .[0]")
assert_eq "argv with nothing to mask" "[\"/bin/sh\",\"-c\",\"exit 0\",\"sh\",\"harmless-$MARK\"]" "$(jq -c .argv <<<"$ev2")"
assert_eq "args_redacted when nothing matched" false "$(jq -r '.args_redacted // false' <<<"$ev2")"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
n=$(sqlite3 "$SL_DB" "SELECT count(*) FROM events WHERE json LIKE '%=$MARK%' OR json LIKE '%tok$MARK%'")
assert_eq "stored rows holding a secret" 0 "$n"
for f in "$SL_DB" "$SL_DB-wal"; do
	[ -e "$f" ] || continue
	grep -aq -- "=$MARK" "$f" && fail "the secret is in $f"
	grep -aq -- "tok$MARK" "$f" && fail "the token is in $f"
done
echo "ok - no secret in the store"
echo "PASS"
