# Store test helpers (t_store_*): source after common.sh, set DB to the
# store path the agent was given.
health() { curl -sf -m 5 "$SL_API/healthz"; }
# wait_store JQ-CONDITION-ON-.store TIMEOUT-S WHAT
wait_store() {
	local n=0
	until health | jq -e ".store | $1" >/dev/null 2>&1; do
		[ $n -lt $(($2 * 4)) ] || fail "$3 within $2 s: $(health | jq -c .store)"
		sleep 0.25
		n=$((n + 1))
	done
}
# rows in the file at $DB for the exec of /bin/true MARKER ("no-table" if unreadable)
in_file() {
	sqlite3 "file:$DB?mode=ro" \
		"SELECT count(*) FROM events WHERE type='exec' AND json_extract(json,'\$.argv[1]')='$1'" 2>/dev/null ||
		echo "no-table"
}
