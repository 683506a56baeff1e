// SPDX-License-Identifier: GPL-2.0
/*
 * wirespeed observe: NAPI polling, RX path, GRO coalescing, softirq and
 * hardirq time, counted on classic tracepoints only (no BTF, no CO-RE, no
 * kprobes), so it loads on kernels built without BTF such as Raspberry Pi OS.
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
 *
 * The counters are in per-CPU maps: programs never contend, user space sums
 * (internal/observe/collector.go). Only napi_names, written once per NAPI
 * id, and the window, written by user space, are shared.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define IFNAMSIZ	16
#define HIST_BINS	18	/* 0, 16 bins of budget/16, over budget */
#define NR_VECS		10	/* NR_SOFTIRQS */
#define NET_TX_VEC	2
#define NET_RX_VEC	3

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

enum poll_ctx {
	POLL_CTX_UNKNOWN = 0,	/* softirq tracepoints not attached */
	POLL_CTX_SOFTIRQ = 1,	/* inside NET_RX softirq on this CPU */
	POLL_CTX_TASK = 2,	/* a task: napi/<dev>-<id> kthread, busy poll */
};

struct napi_key {
	__u64 napi;
	__u32 pid;		/* 0 in softirq */
	__u32 ctx;		/* enum poll_ctx */
	char dev[IFNAMSIZ];
};

struct napi_val {
	__u64 polls;
	__u64 work;
	__u64 full;		/* polls with work >= budget */
	__u64 hist[HIST_BINS];
	__u32 budget;		/* last budget seen */
	__u32 max_work;
};

enum rx_kind {
	RX_GRO = 0,		/* napi_gro_receive_entry: segments into GRO */
	RX_SKB = 1,		/* netif_receive_skb: skbs delivered */
	RX_SKB_ENTRY = 2,	/* netif_receive_skb_entry: driver, no GRO */
	RX_LIST_ENTRY = 3,	/* netif_receive_skb_list_entry */
	RX_NETIF_RX = 4,	/* netif_rx: per-CPU backlog */
};

struct rx_key {
	char dev[IFNAMSIZ];	/* empty when napi_id is set: see napi_names */
	__u32 napi_id;
	__u32 kind;		/* enum rx_kind */
};

struct napi_name {
	char dev[IFNAMSIZ];
};

struct count_val {
	__u64 count;
	__u64 bytes;
};

struct time_val {
	__u64 count;
	__u64 ns;
	__u64 start;		/* entry timestamp, 0 when not inside */
};

struct irq_val {
	__u64 count;
	__u64 ns;
};

struct irq_cur {
	__u64 start;
	__s32 irq;
	__u32 pad;
};

struct dql_val {
	__u64 count;
	__u32 max_len;
	__u32 max_thrs;
};

/* Entries lost to full maps, per CPU, by map: 0 napi, 1 rx, 2 irq. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct napi_key);
	__type(value, struct napi_val);
} napi_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 2048);
	__type(key, struct rx_key);
	__type(value, struct count_val);
} rx_stats SEC(".maps");

/*
 * napi_gro_receive_entry fires for every segment, so its counts by NAPI id
 * go first to a direct-mapped per-CPU array (slot = id % GRO_SLOTS), which
 * costs no hashing; an id whose slot another id holds on this CPU falls
 * back to rx_stats. User space adds both up.
 */
#define GRO_SLOTS	256

struct gro_slot {
	__u32 napi_id;		/* 0: free */
	__u32 pad;
	__u64 count;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GRO_SLOTS);
	__type(key, __u32);
	__type(value, struct gro_slot);
} gro_fast SEC(".maps");

/* NAPI id -> device name, written when an id is first seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__type(key, __u32);
	__type(value, struct napi_name);
} napi_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_VECS);
	__type(key, __u32);
	__type(value, struct time_val);
} softirq_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, __s32);
	__type(value, struct irq_val);
} irq_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_cur);
} irq_now SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dql_val);
} dql_stats SEC(".maps");

/*
 * The counting window, CLOCK_MONOTONIC ns (bpf_ktime_get_ns()'s clock), set
 * by user space: events count from open until close (0: still open). When
 * sampling (Options.Sample) the programs are attached for a window only;
 * user space attaches them, opens the window, later closes it and then
 * detaches them, so every program counts over exactly the same span, which
 * user space knows to the microsecond - detaching takes milliseconds and
 * is not ordered. The softirq and hardirq programs keep track of "inside
 * NET_RX" and of the handler running whether the window is open or not,
 * and clip the time they add to the window.
 */
struct count_window {
	__u64 open;
	__u64 close;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct count_window);
} window SEC(".maps");

/*
 * Set by user space when the softirq programs are attached. BPF read-only
 * data: const volatile and initialised, so it lands in .rodata, which the
 * loader rewrites before the verifier sees it.
 */
volatile const __u32 have_softirq = 0;

static __always_inline struct count_window *get_window(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&window, &zero);
}

/* Whether events count now: the window is open. */
static __always_inline int counting(void)
{
	struct count_window *w = get_window();

	return w && w->open && !w->close;
}

/* The part of [start, now] inside the window, in ns. */
static __always_inline __u64 in_window(__u64 start, __u64 now)
{
	struct count_window *w = get_window();
	__u64 lo, hi;

	if (!w || !w->open)
		return 0;
	lo = start > w->open ? start : w->open;
	hi = w->close && w->close < now ? w->close : now;
	return hi > lo ? hi - lo : 0;
}

static __always_inline void count_lost(__u32 map)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &map);

	if (v)
		(*v)++;
}

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

static __always_inline __u32 hist_bin(__s32 work, __s32 budget)
{
	if (work <= 0)
		return 0;
	if (budget <= 0 || work > budget)
		return HIST_BINS - 1;
	return 1 + (__u32)(work - 1) * 16 / (__u32)budget;
}

SEC("tracepoint/napi/napi_poll")
int tp_napi_poll(struct napi_poll_ctx *ctx)
{
	struct napi_key key = {};
	struct napi_val *v;
	__s32 work = ctx->work, budget = ctx->budget;
	__u32 bin;

	if (!counting())
		return 0;
	key.napi = ctx->napi;
	read_name(ctx, ctx->dev_name, key.dev);
	if (have_softirq) {
		__u32 vec = NET_RX_VEC;
		struct time_val *t = bpf_map_lookup_elem(&softirq_stats, &vec);

		if (t && t->start) {
			key.ctx = POLL_CTX_SOFTIRQ;
		} else {
			key.ctx = POLL_CTX_TASK;
			key.pid = (__u32)bpf_get_current_pid_tgid();
		}
	} else {
		key.pid = (__u32)bpf_get_current_pid_tgid();
	}

	v = bpf_map_lookup_elem(&napi_stats, &key);
	if (!v) {
		struct napi_val zero = {};

		bpf_map_update_elem(&napi_stats, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&napi_stats, &key);
		if (!v) {
			count_lost(0);
			return 0;
		}
	}
	v->polls++;
	if (work > 0)
		v->work += work;
	if (work >= budget && budget > 0)
		v->full++;
	if (work > 0 && (__u32)work > v->max_work)
		v->max_work = work;
	v->budget = budget;
	bin = hist_bin(work, budget);
	/* Keep clang from dropping the bound the verifier needs to see. */
	asm volatile("" : "+r"(bin));
	if (bin < HIST_BINS)
		v->hist[bin]++;
	return 0;
}

static __always_inline void add_rx(struct rx_key *key, __u32 len)
{
	struct count_val *v = bpf_map_lookup_elem(&rx_stats, key);

	if (!v) {
		struct count_val one = { .count = 1, .bytes = len };

		if (bpf_map_update_elem(&rx_stats, key, &one, BPF_NOEXIST) == 0)
			return;
		v = bpf_map_lookup_elem(&rx_stats, key);
		if (!v) {
			count_lost(1);
			return;
		}
	}
	v->count++;
	v->bytes += len;
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
	__u32 vec = ctx->vec;
	struct time_val *t;

	if (vec >= NR_VECS)
		return 0;
	t = bpf_map_lookup_elem(&softirq_stats, &vec);
	if (!t)
		return 0;
	if (counting())
		t->count++;
	/*
	 * Time only the network softirqs; the others are just counted. The
	 * start is kept outside the window too: napi_poll reads it.
	 */
	if (vec == NET_RX_VEC || vec == NET_TX_VEC)
		t->start = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int tp_softirq_exit(struct softirq_ctx *ctx)
{
	__u32 vec = ctx->vec;
	struct time_val *t;

	if (vec != NET_RX_VEC && vec != NET_TX_VEC)
		return 0;
	t = bpf_map_lookup_elem(&softirq_stats, &vec);
	/* An exit without its entry (attached since) is not timed. */
	if (t && t->start) {
		t->ns += in_window(t->start, bpf_ktime_get_ns());
		t->start = 0;
	}
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int tp_irq_entry(struct irq_ctx *ctx)
{
	__u32 zero = 0;
	struct irq_cur *c = bpf_map_lookup_elem(&irq_now, &zero);

	if (c) {
		c->irq = ctx->irq;
		c->start = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int tp_irq_exit(struct irq_ctx *ctx)
{
	__u32 zero = 0;
	__s32 irq = ctx->irq;
	struct irq_cur *c = bpf_map_lookup_elem(&irq_now, &zero);
	struct irq_val *v;
	__u64 ns = 0;

	/* An exit without its entry is counted, but not timed. */
	if (c && c->start && c->irq == irq) {
		ns = in_window(c->start, bpf_ktime_get_ns());
		c->start = 0;
	}
	if (!counting())
		return 0;
	v = bpf_map_lookup_elem(&irq_stats, &irq);
	if (!v) {
		struct irq_val one = { .count = 1, .ns = ns };

		if (bpf_map_update_elem(&irq_stats, &irq, &one, BPF_NOEXIST) == 0)
			return 0;
		v = bpf_map_lookup_elem(&irq_stats, &irq);
		if (!v) {
			count_lost(2);
			return 0;
		}
	}
	v->count++;
	v->ns += ns;
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
