#!/bin/sh
# Builds tourney at a commit into DIR/tourney (a folder relative to this script's), to play
# as an outside engine (`tourney engine ab`) against the built-in players of the working
# tree. Built without debug info, so it fits the 64 MiB artifact limit.
#
#   experiments/strength/build-baseline.sh [COMMIT [DIR]]
#
# The baselines of the two rounds:
#   (defaults)                     fee518c into baseline/: the players before issue 17's
#                                  strength work (the time keeping of mcts fixed, nothing
#                                  else changed), for the files of this folder;
#   9cf7471 raised/baseline        the players of issue 17's end, where issue 38's round
#                                  began, for the files of raised/;
#   17b8def raised/previous        the search before partial iterations, for
#                                  raised/partial-iteration-*.toml.
set -eu
BASELINE=fee518c
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
