#!/usr/bin/env bash
# CPU instructions per serviced replayable GPU fault, one full batch of 256 faults on 256
# distinct pages: fetch from the fault buffer (the GPU model's), coalesce, sort, service
# (residency, memory, mappings), flush and replay; the copies (and zero-fills) excluded.
# Counted by callgrind over `timed_bottom_half` in uvm's host tests (release build), on the
# bench's lean backend (`LeanMachine`: flat PTE arrays, free lists), whose calls are out of line
# so that "backend" below is the backend's own cost.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y valgrind >/dev/null; else echo "bench-uvm-faults: needs valgrind (apt-get install valgrind)" >&2; exit 1; fi
fi
cargo test -p uvm --release --no-run >/dev/null 2>&1
bin="$(ls -t target/release/deps/uvm-* | grep -v '\.d$' | head -1)"
out="$(mktemp)"
valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*timed_bottom_half*' \
    "$bin" service_tests::fault_service_cost_workload --exact --test-threads=1 >/dev/null 2>&1
annotated="$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null)"
rm -f "$out"
total="$(printf '%s\n' "$annotated" | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }')"
# Inlined code is listed once per source file, with overlapping inclusive counts: take each
# function's largest entry.
inclusive_of() {
    printf '%s\n' "$annotated" | grep -E "as uvm::service::UvmBackend>::($1)( |\$)" |
        awk '{ gsub(",", "", $1); n = $0; sub(/^.*UvmBackend>::/, "", n); sub(/ .*$/, "", n); v = $1 + 0; if (v > m[n] + 0) m[n] = v }
             END { for (k in m) s += m[k]; print s + 0 }'
}
excluded="$(inclusive_of 'copy|zero')"
backend="$(inclusive_of 'copy|zero|map|unmap|alloc|free')"
per_fault=$(( (total - excluded) / 256 ))
own=$(( (total - backend) / 256 ))
echo "bench-uvm-faults: ${total} instructions in one bottom half of 256 faults, ${excluded} of them in copies and zero-fills, ${backend} in all backend calls (the bench machine's page tables and free lists)"
echo "bench-uvm-faults: ${per_fault} instructions per serviced fault with copies excluded; ${own} per fault in uvm's own code (fetch through replay, backend excluded)"
