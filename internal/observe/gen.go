// SPDX-License-Identifier: Apache-2.0

package observe

// The BPF objects are generated with Debian's clang (make bpf) and committed,
// so building wirespeed needs no clang. Debian 12's clang 14.0.6 built the
// committed ones: make bpf-check (scripts/bpf-check.sh) rebuilds them from
// bpf/*.c and compares, byte for byte with that clang. -target bpfel serves every
// little-endian architecture (amd64, arm64, arm, riscv64). observe is built
// for the record layouts of 64-bit kernels, observe32 (-DOBSERVE_PTR32) for
// those of 32-bit kernels; see bpf/observe.c. The two -I paths find
// asm/types.h on Debian amd64 and arm64 hosts; a missing one is ignored.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "-O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu" -type napi_key -type napi_val -type rx_key -type count_val -type time_val -type irq_val -type dql_val -type napi_name -type gro_slot -type count_window observe bpf/observe.c -- -I/usr/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "-O2 -g -Wall -Werror -DOBSERVE_PTR32 -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu" observe32 bpf/observe.c -- -I/usr/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cc clang -cflags "-O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu" -type dev_slot observebtf bpf/observe_btf.c -- -I/usr/include
