// SPDX-License-Identifier: GPL-2.0-only
/*
 * wirespeed observe: what the classic-tracepoint object (observe.c) and the
 * raw BTF tracepoint object (observe_btf.c) share - the maps user space
 * reads, the counting window and the counting logic - so that both count
 * into the same maps in the same way and user space reads one set.
 *
 * The counters are in per-CPU maps: programs never contend, user space sums
 * (internal/observe/collector_read.go). Only napi_names, written once per NAPI
 * id, and the window, written by user space, are shared.
 */
#ifndef WIRESPEED_OBSERVE_H
#define WIRESPEED_OBSERVE_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define IFNAMSIZ	16
#define HIST_BINS	18	/* 0, 16 bins of budget/16, over budget */
#define NR_VECS		10	/* NR_SOFTIRQS */
#define NET_TX_VEC	2
#define NET_RX_VEC	3

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

/*
 * The raw BTF programs (observe_btf.c) count netif_receive_skb and
 * netif_rx, once per packet, in a direct-mapped per-CPU array like
 * gro_fast: slot = kind's block + ifindex % DEV_SLOTS, claimed by the
 * first device seen in it on this CPU, which it keeps. The device is
 * matched by its struct net_device address; its name and network
 * namespace are read once, when it claims the slot. A device whose slot
 * another one holds falls back to rx_stats. User space adds both up.
 */
#define DEV_SLOTS	64
#define DEV_KINDS	2	/* block 0: RX_SKB, block 1: RX_NETIF_RX */

struct dev_slot {
	__u64 dev_ptr;		/* 0: free */
	__u32 kind;		/* enum rx_kind */
	__u32 netns;		/* the device's network namespace inode */
	__u32 ifindex;
	__u32 pad;
	__u64 count;
	__u64 bytes;
	char dev[IFNAMSIZ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DEV_SLOTS * DEV_KINDS);
	__type(key, __u32);
	__type(value, struct dev_slot);
} dev_fast SEC(".maps");

/*
 * The raw napi_poll program counts in a direct-mapped per-CPU array too,
 * slot = the NAPI's id % NAPI_SLOTS (0 for the per-CPU backlogs, which
 * have none), claimed by the
 * first (napi, context, pid) seen in it on this CPU; the device name is
 * read once, when it claims the slot. Others fall back to napi_stats.
 */
#define NAPI_SLOTS	64

struct napi_slot {
	struct napi_key key;	/* key.napi 0: free */
	struct napi_val val;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NAPI_SLOTS);
	__type(key, __u32);
	__type(value, struct napi_slot);
} napi_fast SEC(".maps");

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


static __always_inline __u32 hist_bin(__s32 work, __s32 budget)
{
	if (work <= 0)
		return 0;
	if (budget <= 0 || work > budget)
		return HIST_BINS - 1;
	return 1 + (__u32)(work - 1) * 16 / (__u32)budget;
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
 * Sets key's context: softirq when NET_RX's softirq_entry has been seen on
 * this CPU and its exit not yet, else the task (a NAPI thread, busy
 * polling), with its pid.
 */
static __always_inline void poll_ctx(struct napi_key *key)
{
	if (have_softirq) {
		__u32 vec = NET_RX_VEC;
		struct time_val *t = bpf_map_lookup_elem(&softirq_stats, &vec);

		if (t && t->start) {
			key->ctx = POLL_CTX_SOFTIRQ;
			return;
		}
		key->ctx = POLL_CTX_TASK;
	}
	key->pid = (__u32)bpf_get_current_pid_tgid();
}

static __always_inline void add_poll(struct napi_val *v, __s32 work, __s32 budget)
{
	__u32 bin;

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
}

/*
 * Counts one napi_poll into napi_stats; the caller has filled in key's
 * napi, dev and context (poll_ctx).
 */
static __always_inline void count_poll(struct napi_key *key, __s32 work, __s32 budget)
{
	struct napi_val *v = bpf_map_lookup_elem(&napi_stats, key);

	if (!v) {
		struct napi_val zero = {};

		bpf_map_update_elem(&napi_stats, key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&napi_stats, key);
		if (!v) {
			count_lost(0);
			return;
		}
	}
	add_poll(v, work, budget);
}

static __always_inline void softirq_entry(__u32 vec)
{
	struct time_val *t;

	if (vec >= NR_VECS)
		return;
	t = bpf_map_lookup_elem(&softirq_stats, &vec);
	if (!t)
		return;
	if (counting())
		t->count++;
	/*
	 * Time only the network softirqs; the others are just counted. The
	 * start is kept outside the window too: napi_poll reads it.
	 */
	if (vec == NET_RX_VEC || vec == NET_TX_VEC)
		t->start = bpf_ktime_get_ns();
}

static __always_inline void softirq_exit(__u32 vec)
{
	struct time_val *t;

	if (vec != NET_RX_VEC && vec != NET_TX_VEC)
		return;
	t = bpf_map_lookup_elem(&softirq_stats, &vec);
	/* An exit without its entry (attached since) is not timed. */
	if (t && t->start) {
		t->ns += in_window(t->start, bpf_ktime_get_ns());
		t->start = 0;
	}
}

static __always_inline void irq_entry(__s32 irq)
{
	__u32 zero = 0;
	struct irq_cur *c = bpf_map_lookup_elem(&irq_now, &zero);

	if (c) {
		c->irq = irq;
		c->start = bpf_ktime_get_ns();
	}
}

static __always_inline void irq_exit(__s32 irq)
{
	__u32 zero = 0;
	struct irq_cur *c = bpf_map_lookup_elem(&irq_now, &zero);
	struct irq_val *v;
	__u64 ns = 0;

	/* An exit without its entry is counted, but not timed. */
	if (c && c->start && c->irq == irq) {
		ns = in_window(c->start, bpf_ktime_get_ns());
		c->start = 0;
	}
	if (!counting())
		return;
	v = bpf_map_lookup_elem(&irq_stats, &irq);
	if (!v) {
		struct irq_val one = { .count = 1, .ns = ns };

		if (bpf_map_update_elem(&irq_stats, &irq, &one, BPF_NOEXIST) == 0)
			return;
		v = bpf_map_lookup_elem(&irq_stats, &irq);
		if (!v) {
			count_lost(2);
			return;
		}
	}
	v->count++;
	v->ns += ns;
}

#endif /* WIRESPEED_OBSERVE_H */
