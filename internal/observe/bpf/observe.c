// SPDX-License-Identifier: GPL-2.0-only
/*
 * wirespeed observe: NAPI polling, RX path, GRO coalescing, softirq and
 * hardirq time, counted on classic tracepoints only (no BTF, no CO-RE, no
 * kprobes), so it loads on kernels built without BTF such as Raspberry Pi OS.
 * Where the kernel has BTF, user space prefers observe_btf.c's raw
 * tracepoints for the events that object has; the maps and the counting
 * logic both use are in observe.h.
 *
 * The object is GPL-2.0: bpf_probe_read_kernel() and
 * bpf_probe_read_kernel_str(), which copy the device names out of the
 * records, are GPL-only helpers.
 *
 * Every context struct below mirrors a tracefs format file, named above it.
 * User space reads the format files of the running kernel before loading
 * and refuses a program whose fields moved (internal/observe/format.go), so
 * a changed layout is reported instead of silently miscounted. Keep the
 * expectations in format.go in step with the CHECK_OFFs here.
 */
#include "observe.h"

/*
 * Kernel pointers in records are 8 bytes on 64-bit kernels and 4 on 32-bit
 * ones (Raspberry Pi OS armhf), which moves every later field. The object is
 * built twice (gen.go): observe_bpfel.o for 64-bit layouts and, with
 * -DOBSERVE_PTR32, observe32_bpfel.o for 32-bit ones; user space picks, per
 * tracepoint, the one whose layout the running kernel's format file shows.
 * The 32-bit offsets follow from the kernel's TP_STRUCT__entry definitions
 * and are checked against the format file before use like the 64-bit ones.
 */
#ifdef OBSERVE_PTR32
typedef __u32 kptr_t;
#define OFF(off64, off32) (off32)
#else
typedef __u64 kptr_t;
#define OFF(off64, off32) (off64)
#endif

#define CHECK_OFF(type, field, off64, off32) \
	_Static_assert(__builtin_offsetof(type, field) == OFF(off64, off32), #type "." #field)

/* events/napi/napi_poll/format */
struct napi_poll_ctx {
	__u64 common;
	kptr_t napi;		/* struct napi_struct *napi */
	__u32 dev_name;		/* __data_loc char[] dev_name */
	__s32 work;
	__s32 budget;
};

CHECK_OFF(struct napi_poll_ctx, napi, 8, 8);
CHECK_OFF(struct napi_poll_ctx, dev_name, 16, 12);
CHECK_OFF(struct napi_poll_ctx, work, 20, 16);
CHECK_OFF(struct napi_poll_ctx, budget, 24, 20);

/*
 * events/net/{napi_gro_receive_entry,netif_receive_skb_entry,
 * netif_receive_skb_list_entry}/format (class net_dev_rx_verbose_template)
 */
struct rx_verbose_ctx {
	__u64 common;
	__u32 name;		/* __data_loc char[] name */
	__u32 napi_id;
	__u16 queue_mapping;
	__u16 pad0[sizeof(kptr_t) / 2 - 1];
	kptr_t skbaddr;
	__u8 other[20];		/* vlan_tagged .. l4_hash */
	__u32 len;
};

CHECK_OFF(struct rx_verbose_ctx, name, 8, 8);
CHECK_OFF(struct rx_verbose_ctx, napi_id, 12, 12);
CHECK_OFF(struct rx_verbose_ctx, len, 52, 44);

/* events/net/{netif_receive_skb,netif_rx}/format (class net_dev_template) */
struct net_dev_ctx {
	__u64 common;
	kptr_t skbaddr;
	__u32 len;
	__u32 name;		/* __data_loc char[] name */
};

CHECK_OFF(struct net_dev_ctx, len, 16, 12);
CHECK_OFF(struct net_dev_ctx, name, 20, 16);

/* events/irq/{softirq_entry,softirq_exit}/format */
struct softirq_ctx {
	__u64 common;
	__u32 vec;
};

/* events/irq/{irq_handler_entry,irq_handler_exit}/format */
struct irq_ctx {
	__u64 common;
	__s32 irq;
};

/* events/napi/dql_stall_detected/format */
struct dql_stall_ctx {
	__u64 common;
	__u16 thrs;
	__u16 pad0;
	__u32 len;
};

CHECK_OFF(struct dql_stall_ctx, len, 12, 12);

/* Copies the __data_loc string at loc of the record into dev. */
static __always_inline void read_name(void *ctx, __u32 loc, char *dev)
{
	bpf_probe_read_kernel_str(dev, IFNAMSIZ, (char *)ctx + (loc & 0xffff));
}

/* Keeps the first n bytes of a little-endian word, zeroes the rest. */
static __always_inline __u64 keep_bytes(__u64 w, __s32 n)
{
	if (n <= 0)
		return 0;
	if (n >= 8)
		return w;
	return w & ((1ULL << (8 * n)) - 1);
}

/*
 * read_name() for the events that run once per packet: the loc word gives
 * the string's length (with its NUL), so one fixed 16-byte copy and a mask
 * replace the byte-by-byte string copy. (The string area lies past the
 * fixed record, where the kernel allows no direct context loads.)
 */
static __always_inline void read_name_fast(void *ctx, __u32 loc, char *dev)
{
	__s32 n = (loc >> 16) - 1;
	__u64 *w = (__u64 *)dev;

	if (n < 0 || n >= IFNAMSIZ ||
	    bpf_probe_read_kernel(dev, IFNAMSIZ, (char *)ctx + (loc & 0xffff))) {
		w[0] = 0;
		w[1] = 0;
		read_name(ctx, loc, dev);
		return;
	}
	w[0] = keep_bytes(w[0], n);
	w[1] = keep_bytes(w[1], n - 8);
}

SEC("tracepoint/napi/napi_poll")
int tp_napi_poll(struct napi_poll_ctx *ctx)
{
	struct napi_key key = {};

	if (!counting())
		return 0;
	key.napi = ctx->napi;
	read_name(ctx, ctx->dev_name, key.dev);
	poll_ctx(&key);
	count_poll(&key, ctx->work, ctx->budget);
	return 0;
}

/*
 * Events that carry a NAPI id are counted by id alone - NAPI ids are unique
 * on the host, across network namespaces - and the device name is read only
 * when an id is first seen, into napi_names. This keeps the per-segment
 * napi_gro_receive_entry cheap. Without an id, the key is the name.
 */
static __always_inline void count_rx_verbose(struct rx_verbose_ctx *ctx, __u32 kind)
{
	struct rx_key key = {};
	struct napi_name nn = {};
	struct count_val *v;
	__u32 id = ctx->napi_id;

	key.kind = kind;
	if (!id) {
		read_name_fast(ctx, ctx->name, key.dev);
		add_rx(&key, ctx->len);
		return;
	}
	key.napi_id = id;
	v = bpf_map_lookup_elem(&rx_stats, &key);
	if (v) {
		v->count++;
		v->bytes += ctx->len;
		return;
	}
	read_name(ctx, ctx->name, nn.dev);
	bpf_map_update_elem(&napi_names, &id, &nn, BPF_ANY);
	add_rx(&key, ctx->len);
}

static __always_inline void count_rx_net_dev(struct net_dev_ctx *ctx, __u32 kind)
{
	struct rx_key key = {};

	read_name_fast(ctx, ctx->name, key.dev);
	key.kind = kind;
	add_rx(&key, ctx->len);
}

SEC("tracepoint/net/napi_gro_receive_entry")
int tp_gro_receive(struct rx_verbose_ctx *ctx)
{
	__u32 id = ctx->napi_id;
	__u32 slot = id % GRO_SLOTS;
	struct gro_slot *g;

	if (!counting())
		return 0;
	g = id ? bpf_map_lookup_elem(&gro_fast, &slot) : NULL;
	if (g && g->napi_id == id) {
		g->count++;
		g->bytes += ctx->len;
		return 0;
	}
	if (g && !g->napi_id) {
		struct napi_name nn = {};

		read_name(ctx, ctx->name, nn.dev);
		bpf_map_update_elem(&napi_names, &id, &nn, BPF_ANY);
		g->napi_id = id;
		g->count = 1;
		g->bytes = ctx->len;
		return 0;
	}
	count_rx_verbose(ctx, RX_GRO);
	return 0;
}

SEC("tracepoint/net/netif_receive_skb")
int tp_receive_skb(struct net_dev_ctx *ctx)
{
	if (!counting())
		return 0;
	count_rx_net_dev(ctx, RX_SKB);
	return 0;
}

SEC("tracepoint/net/netif_receive_skb_entry")
int tp_receive_skb_entry(struct rx_verbose_ctx *ctx)
{
	if (!counting())
		return 0;
	count_rx_verbose(ctx, RX_SKB_ENTRY);
	return 0;
}

SEC("tracepoint/net/netif_receive_skb_list_entry")
int tp_receive_skb_list_entry(struct rx_verbose_ctx *ctx)
{
	if (!counting())
		return 0;
	count_rx_verbose(ctx, RX_LIST_ENTRY);
	return 0;
}

SEC("tracepoint/net/netif_rx")
int tp_netif_rx(struct net_dev_ctx *ctx)
{
	if (!counting())
		return 0;
	count_rx_net_dev(ctx, RX_NETIF_RX);
	return 0;
}

SEC("tracepoint/irq/softirq_entry")
int tp_softirq_entry(struct softirq_ctx *ctx)
{
	softirq_entry(ctx->vec);
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int tp_softirq_exit(struct softirq_ctx *ctx)
{
	softirq_exit(ctx->vec);
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int tp_irq_entry(struct irq_ctx *ctx)
{
	irq_entry(ctx->irq);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int tp_irq_exit(struct irq_ctx *ctx)
{
	irq_exit(ctx->irq);
	return 0;
}

SEC("tracepoint/napi/dql_stall_detected")
int tp_dql_stall(struct dql_stall_ctx *ctx)
{
	__u32 zero = 0;
	struct dql_val *v = bpf_map_lookup_elem(&dql_stats, &zero);

	if (v && counting()) {
		v->count++;
		if (ctx->len > v->max_len)
			v->max_len = ctx->len;
		if (ctx->thrs > v->max_thrs)
			v->max_thrs = ctx->thrs;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
