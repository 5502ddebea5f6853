#!/usr/bin/env bash
# CPU instructions per kernel launch (`Stream::launch`: arguments, QMD from the template,
# constant bank 0, pushbuffer, GPFIFO entry, GPPut, doorbell) and per GPFIFO submission
# (pushbuffer copy, GPFIFO entry, GPPut, doorbell), counted by callgrind over the tests'
# out-of-line `one_launch` (60 launches, the doorbell held back) and `one_submission` (1000
# submissions) in release builds; the model's own work behind a doorbell is not among them.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y valgrind >/dev/null; else echo "bench-launch: needs valgrind (apt-get install valgrind)" >&2; exit 1; fi
fi
count() { # test-binary-name test-name function calls
    cargo test -p tests --release --test "$1" --no-run >/dev/null 2>&1
    local bin out total
    bin="$(ls -t target/release/deps/"$1"-* | grep -v '\.d$' | head -1)"
    out="$(mktemp)"
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="*$3*" \
        "$bin" "$2" --exact --test-threads=1 >/dev/null 2>&1
    total="$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }')"
    rm -f "$out"
    echo $(( total / $4 ))
}
launch="$(count compute launch_cost one_launch 60)"
submission="$(count channels submission_cost one_submission 1000)"
echo "bench-launch: ${launch} instructions per kernel launch (callgrind over 60 Stream::launch calls, doorbell held back)"
echo "bench-launch: ${submission} instructions per GPFIFO submission (callgrind over 1000 Channel::submit calls)"
