/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: every lock algorithm, and the list the kernel, the benchmark and
 * the tests iterate over.
 */
#ifndef PVLOCK_CORE_ALGORITHMS_H
#define PVLOCK_CORE_ALGORITHMS_H

#include "backoff.h"
#include "preempt_ticket.h"
#include "queued.h"
#include "ticket.h"
#include "unfair.h"

namespace pvlock {

/*
 * Calls f.template operator()<Algo>() for every algorithm on platform P, in
 * the order they are listed to users. Native builds come first so a table
 * reads "without PV hooks, then with".
 */
template <typename P, typename F>
static inline void for_each_algorithm(F &&f)
{
	f.template operator()<Ticket<P>>();
	f.template operator()<PvTicket<P>>();
	f.template operator()<Queued<P>>();
	f.template operator()<PvQueued<P>>();
	f.template operator()<UnfairTas<P>>();
	f.template operator()<PreemptTicket<P>>();
	f.template operator()<BackoffTicket<P>>();
}

} /* namespace pvlock */

#endif /* PVLOCK_CORE_ALGORITHMS_H */
