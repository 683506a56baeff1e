// SPDX-License-Identifier: GPL-2.0-only
/*
 * ws_broken: a deliberately broken module for testing wirespeed's VM lab
 * guards. Loaded with mode=warn it WARNs, mode=null dereferences NULL
 * (BUG + Oops), mode=lockup spins with preemption off (soft lockup), and
 * mode=none does nothing.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/preempt.h>

static char *mode = "none";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "none, warn, null or lockup");

static int __init ws_broken_init(void)
{
	if (!strcmp(mode, "warn")) {
		WARN(1, "ws_broken: deliberate warning\n");
	} else if (!strcmp(mode, "null")) {
		int *volatile p = NULL;

		pr_info("ws_broken: reading *NULL: %d\n", *p);
	} else if (!strcmp(mode, "lockup")) {
		preempt_disable();
		mdelay(30000);
		preempt_enable();
	}
	return 0;
}

static void __exit ws_broken_exit(void)
{
}

module_init(ws_broken_init);
module_exit(ws_broken_exit);
MODULE_DESCRIPTION("deliberately broken module for wirespeed's VM lab guard tests");
MODULE_LICENSE("GPL");
