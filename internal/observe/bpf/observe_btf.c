// SPDX-License-Identifier: GPL-2.0-only
/*
 * wirespeed observe on raw BTF tracepoints (tp_btf): the events observe
 * counts in light mode, with the programs called straight from the
 * tracepoint with its arguments. A classic tracepoint first builds its
 * trace record (a per-CPU buffer, the device name copied in) for every
 * event and then runs the program on it; here nothing is built, and the
 * per-packet events read two fields of the sk_buff and its net_device.
 *
 * It needs the kernel's BTF (/sys/kernel/btf/vmlinux): the programs' attach
 * points are resolved by the tracepoints' btf_trace_* types, and the few
 * kernel struct fields read below are relocated by name (CO-RE) into the
 * running kernel's layout, so no offsets are compiled in. User space falls
 * back to observe.c's classic programs, event by event, where this object
 * does not load. Both count into the same maps (observe.h).
 *
 * The per-segment events of full mode (napi_gro_receive_entry,
 * netif_receive_skb{,_list}_entry) and dql_stall_detected stay classic.
 */
#include "observe.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/*
 * Only the fields read below; preserve_access_index makes every access a
 * CO-RE relocation against the running kernel's struct of the same name.
 */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} __attribute__((preserve_access_index)) possible_net_t;

struct net_device {
	char name[IFNAMSIZ];
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

struct sk_buff {
	unsigned int len;
	struct net_device *dev;
} __attribute__((preserve_access_index));

struct napi_struct {
	struct net_device *dev;
	unsigned int napi_id;
} __attribute__((preserve_access_index));

static __always_inline void dev_name(struct net_device *dev, char *name)
{
	if (!dev) {
		/* What the classic napi_poll record names a NAPI without one. */
		__builtin_memcpy(name, "(no_device)", 12);
		return;
	}
	bpf_probe_read_kernel_str(name, IFNAMSIZ, dev->name);
}

/* The network namespace's inode number, 0 without CONFIG_NET_NS. */
static __always_inline __u32 dev_netns(struct net_device *dev)
{
	struct net *net;

	if (!bpf_core_field_exists(dev->nd_net.net))
		return 0;
	net = dev->nd_net.net;
	return net ? net->ns.inum : 0;
}

/*
 * Counts an skb into dev_fast (see observe.h), or, when another device
 * holds its slot on this CPU, into rx_stats by name. block is the kind's
 * block in dev_fast.
 */
static __always_inline void count_dev(struct sk_buff *skb, __u32 kind, __u32 block)
{
	struct net_device *dev = skb->dev;
	__u32 len = skb->len;
	struct dev_slot *s;
	struct rx_key key = {};
	__u32 slot;

	if (!dev)
		return;
	slot = block * DEV_SLOTS + (__u32)dev->ifindex % DEV_SLOTS;
	s = bpf_map_lookup_elem(&dev_fast, &slot);
	if (!s)
		return;
	if (s->dev_ptr == (__u64)dev) {
		s->count++;
		s->bytes += len;
		return;
	}
	if (!s->dev_ptr) {
		__builtin_memset(s->dev, 0, IFNAMSIZ);
		dev_name(dev, s->dev);
		s->netns = dev_netns(dev);
		s->ifindex = dev->ifindex;
		s->kind = kind;
		s->count = 1;
		s->bytes = len;
		s->dev_ptr = (__u64)dev;
		return;
	}
	dev_name(dev, key.dev);
	key.kind = kind;
	add_rx(&key, len);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(btf_receive_skb, struct sk_buff *skb)
{
	if (counting())
		count_dev(skb, RX_SKB, 0);
	return 0;
}

SEC("tp_btf/netif_rx")
int BPF_PROG(btf_netif_rx, struct sk_buff *skb)
{
	if (counting())
		count_dev(skb, RX_NETIF_RX, 1);
	return 0;
}

SEC("tp_btf/napi_poll")
int BPF_PROG(btf_napi_poll, struct napi_struct *napi, int work, int budget)
{
	struct napi_key key = {};
	struct napi_slot *s;
	__u32 slot;

	if (!counting())
		return 0;
	key.napi = (__u64)napi;
	poll_ctx(&key);
	/* The address is a pointer to the verifier: no arithmetic on it. */
	slot = 0;
	if (bpf_core_field_exists(napi->napi_id))
		slot = napi->napi_id % NAPI_SLOTS;
	s = bpf_map_lookup_elem(&napi_fast, &slot);
	if (s && s->key.napi == key.napi && s->key.ctx == key.ctx && s->key.pid == key.pid) {
		add_poll(&s->val, work, budget);
		return 0;
	}
	dev_name(napi->dev, key.dev);
	if (s && !s->key.napi) {
		__builtin_memset(&s->val, 0, sizeof(s->val));
		s->key = key;
		add_poll(&s->val, work, budget);
		return 0;
	}
	count_poll(&key, work, budget);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(btf_softirq_entry, unsigned int vec)
{
	softirq_entry(vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(btf_softirq_exit, unsigned int vec)
{
	softirq_exit(vec);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(btf_irq_entry, int irq)
{
	irq_entry(irq);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(btf_irq_exit, int irq)
{
	irq_exit(irq);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
