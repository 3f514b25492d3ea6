#!/bin/sh
# Builds tourney at a commit (default: the frozen baseline below) into ./DIR/tourney
# (default ./baseline/tourney), to play as an outside engine (`tourney engine ab`) against
# the built-in players of the working tree. Built without debug info, so it fits the
# 64 MiB artifact limit.
#
#   bench/strength/build-baseline.sh [COMMIT [DIR]]
set -eu
# The built-in players as they were when issue 38 began (the players of issue 17's end,
# frozen: commit 9cf7471).
BASELINE=9cf7471
commit=${1:-$BASELINE}
dir=${2:-baseline}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/src" "$commit" >/dev/null
(cd "$work/src" && cargo build --release --locked -p tourney \
    --config 'profile.release.debug=false' --config 'profile.release.strip="debuginfo"' \
    --target-dir "$repo/target/baseline")
mkdir -p "$here/$dir"
cp "$repo/target/baseline/release/tourney" "$here/$dir/tourney"
echo "$commit" > "$here/$dir/COMMIT"
echo "$commit: $here/$dir/tourney"
