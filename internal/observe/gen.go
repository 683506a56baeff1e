// SPDX-License-Identifier: Apache-2.0

package observe

// The BPF objects are generated with Debian's clang (make bpf) and committed,
// so building wirespeed needs no clang. Debian 12's clang 14.0.6 built the
// committed ones: make bpf-check (scripts/bpf-check.sh) rebuilds them from
// bpf/*.c and compares, byte for byte with that clang. -target bpfel serves every
// little-endian architecture (amd64, arm64, arm, riscv64). observe is built
// for the record layouts of 64-bit kernels, observe32 (-DOBSERVE_PTR32) for
// those of 32-bit kernels; see bpf/observe.c. The compiler's flags are the
// Makefile's BPF_CFLAGS (make exports them); without them the first line
// stops go generate.
//go:generate sh -c "test -n \"$BPF_CFLAGS\" || { echo 'BPF_CFLAGS is unset: run make bpf, whose Makefile sets the flags' >&2; exit 1; }"
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "$BPF_CFLAGS" -type napi_key -type napi_val -type rx_key -type count_val -type time_val -type irq_val -type dql_val -type napi_name -type gro_slot -type count_window observe bpf/observe.c -- -I/usr/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "$BPF_CFLAGS -DOBSERVE_PTR32" observe32 bpf/observe.c -- -I/usr/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "$BPF_CFLAGS" -type dev_slot observebtf bpf/observe_btf.c -- -I/usr/include
