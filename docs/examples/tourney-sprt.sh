#!/usr/bin/env bash
# The SPRT of a pull request against its base, for a CI job: registers the base commit and
# the pull request's head commit as engine versions built from source (the head's parent
# is the base; a version registered before is reused), submits an SPRT of head against
# base, and waits for its verdict.
#
# Exit status: 0 when H1 is accepted (the change gains at least elo1), 1 when H0 is
# accepted, 2 when there is no verdict (the test paused: a failed build, a bench mismatch;
# or an error). The verdict's summary line is printed and written to $VERDICT_FILE.
#
# Environment:
#   TOURNEY_COORDINATOR, TOURNEY_TOKEN   the coordinator's URL and an admin token
#   BASE_REPO, BASE_SHA                  the base's repository URL and commit
#   HEAD_REPO, HEAD_SHA                  the pull request's repository URL and commit
#   BUILD, BINARY                        the build command and the built program's path
# Optional:
#   LABEL (pr), GAME (loa), ELO0 (0), ELO1 (5), MAX_PAIRS (20000),
#   LIMITS ({ tc = "10+0.1" }), OPENINGS ({ plies = 4, seed = 1 }),
#   VERDICT_FILE (tourney-verdict.txt), TOURNEY (the tourney program: tourney)
set -uo pipefail

fail() {
    echo "tourney-sprt: $*" >&2
    exit 2
}

for name in BASE_REPO BASE_SHA HEAD_REPO HEAD_SHA BUILD BINARY; do
    [ -n "${!name:-}" ] || fail "$name is not set"
done
tourney=${TOURNEY:-tourney}
limits=${LIMITS:-'{ tc = "10+0.1" }'}
openings=${OPENINGS:-'{ plies = 4, seed = 1 }'}
verdict_file=${VERDICT_FILE:-tourney-verdict.txt}
base="base-${BASE_SHA:0:12}"
head="${LABEL:-pr}-${HEAD_SHA:0:12}"

# Registers version $1 of repository $2 at commit $3 (parent $4, if given), unless it is
# registered already.
register() {
    if "$tourney" version show "$1" >/dev/null 2>&1; then
        return 0
    fi
    local parent=()
    [ -n "${4:-}" ] && parent=(--parent "$4")
    "$tourney" version add "$1" --git "$2" --commit "$3" --build "$BUILD" \
        --binary "$BINARY" "${parent[@]}" --note "CI: $2 at $3" ||
        fail "could not register $1 ($2 at $3)"
}

register "$base" "$BASE_REPO" "$BASE_SHA"
register "$head" "$HEAD_REPO" "$HEAD_SHA" "$base"

file=$(mktemp "${TMPDIR:-/tmp}/tourney-sprt-XXXXXX.toml") || fail "no temporary file"
trap 'rm -f "$file"' EXIT
cat >"$file" <<TOML
name = "$head-vs-$base"
game = "${GAME:-loa}"
format = "sprt"
sprt = { elo0 = ${ELO0:-0}, elo1 = ${ELO1:-5}, max_pairs = ${MAX_PAIRS:-20000} }
openings = $openings
limits = $limits

[[engine]]
version = "$head"

[[engine]]
version = "$base"
TOML

# The first line is the tournament's id, the last its summary line.
"$tourney" submit "$file" --wait | tee "$verdict_file"
code=${PIPESTATUS[0]}
case $code in
    0 | 1 | 2) exit "$code" ;;
    *) exit 2 ;;
esac
