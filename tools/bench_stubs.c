/* Stand-ins for vkc functions that this build of the library does not define
 * yet (the core was written in parallel with the benchmark). tools/CMakeLists.txt
 * defines VKC_HAVE_<name> for every function it finds defined in src/, so a
 * stub is compiled only while the real one is missing, and a vkc variant that
 * needs it then reports ok = false with this message instead of failing to
 * link. Delete this file once every function exists. */
#include <vkc/vkc.h>

#define BENCH_STUB return VKC_ERROR_UNSUPPORTED

#ifndef VKC_HAVE_vkc_seq_create
vkc_result vkc_seq_create(vkc_context *ctx, const vkc_seq_desc *desc, vkc_seq **out)
{
    (void)ctx;
    (void)desc;
    if (out)
        *out = NULL;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_seq_begin
vkc_result vkc_seq_begin(vkc_seq *seq)
{
    (void)seq;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_seq_dispatch
vkc_result vkc_seq_dispatch(vkc_seq *seq, const vkc_dispatch_desc *desc)
{
    (void)seq;
    (void)desc;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_seq_end
vkc_result vkc_seq_end(vkc_seq *seq)
{
    (void)seq;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_seq_info_get
vkc_result vkc_seq_info_get(const vkc_seq *seq, vkc_seq_info *out)
{
    (void)seq;
    (void)out;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_seq_submit
vkc_result vkc_seq_submit(vkc_seq *seq, vkc_ticket *out_ticket)
{
    (void)seq;
    (void)out_ticket;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_wait
vkc_result vkc_wait(vkc_context *ctx, vkc_ticket ticket, uint64_t timeout_ns)
{
    (void)ctx;
    (void)ticket;
    (void)timeout_ns;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_dispatch
vkc_result vkc_dispatch(vkc_context *ctx, const vkc_dispatch_desc *desc)
{
    (void)ctx;
    (void)desc;
    BENCH_STUB;
}
#endif
#ifndef VKC_HAVE_vkc_flush
vkc_result vkc_flush(vkc_context *ctx, vkc_ticket *out_ticket)
{
    (void)ctx;
    (void)out_ticket;
    BENCH_STUB;
}
#endif

/* ISO C forbids an empty translation unit. */
typedef int bench_stubs_nonempty;
