# expect CODE DESCRIPTION -- command...: runs the command with its output in
# $tmp/out and $tmp/err, says ok or FAIL (then sets fail=1). Sourced by the
# CLI test scripts, which set tmp and fail.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/out" "$tmp/err"; fail=1
  else
    echo "ok: $what"
  fi
}
