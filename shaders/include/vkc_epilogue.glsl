/* vkc_epilogue.glsl: the completion epilogue (src/epilogue.c).
 *
 * vkc_kernel_create_glsl appends this after a kernel's own source, whose
 * main() a #define after #version renamed to vkc_kernel_main_ (the lines
 * there also enable GL_EXT_buffer_reference, GL_EXT_buffer_reference_uvec2
 * and GL_KHR_memory_scope_semantics). Where a submission would end with the
 * completion marker (a barrier and a one-invocation dispatch) and its last
 * dispatch runs alone after a barrier, vkc binds that kernel's second
 * pipeline, the one with vkc_epilogue_on_ set: every workgroup, once all of
 * its invocations are done, adds one to an arrival word, and the workgroup
 * that arrives last resets the word and publishes the completion count to
 * the host word, as the marker would have. In every other pipeline the
 * constant is false and the driver drops the code.
 *
 * Specialization constants 2030..2034 are vkc's (VKC_EPILOGUE_SPEC_ID in
 * vkc.h): the form (0: off; bit 0 on; bit 1 the count published by an
 * atomic exchange instead of a store: VKC_EPILOGUE_FORM=xchg; bit 2
 * scoped acquire-release atomics and a control barrier instead of the
 * completion marker's and the raw probe's fences (memoryBarrierBuffer,
 * barrier, plain atomics: 0.4-0.6 us less of round trip on the H200):
 * =scoped; measured side by side), then the device addresses of the count block and of the
 * host word, low and high halves. */
#undef main
layout(constant_id = 2030) const uint vkc_epilogue_form_ = 0u;
layout(constant_id = 2031) const uint vkc_epilogue_dev_lo_ = 0u;
layout(constant_id = 2032) const uint vkc_epilogue_dev_hi_ = 0u;
layout(constant_id = 2033) const uint vkc_epilogue_host_lo_ = 0u;
layout(constant_id = 2034) const uint vkc_epilogue_host_hi_ = 0u;
/* The marker's count (word 0) and the arrival word (word 16, a line away). */
layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkc_epilogue_dev_ {
    uint n;
    uint pad_[15];
    uint arrivals;
};
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer vkc_epilogue_host_ {
    uint count;
};
void main()
{
    vkc_kernel_main_();
    if (vkc_epilogue_form_ == 0u)
        return;
    /* Every invocation of the workgroup is done before its arrival. */
    if ((vkc_epilogue_form_ & 4u) != 0u) {
        controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                       gl_StorageSemanticsBuffer | gl_StorageSemanticsImage,
                       gl_SemanticsAcquireRelease);
    } else {
        memoryBarrierBuffer();
        barrier();
    }
    if (gl_LocalInvocationIndex != 0u)
        return;
    vkc_epilogue_dev_ d = vkc_epilogue_dev_(uvec2(vkc_epilogue_dev_lo_, vkc_epilogue_dev_hi_));
    const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;
    /* One workgroup is the last by itself (the latency-bound case: no
     * arrival round trip). */
    if (groups != 1u) {
        const uint a = (vkc_epilogue_form_ & 4u) != 0u
                           ? atomicAdd(d.arrivals, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                       gl_SemanticsAcquireRelease)
                           : atomicAdd(d.arrivals, 1u);
        if (a + 1u != groups)
            return;
        /* The last arrival: every other workgroup's add came before its own. */
        atomicStore(d.arrivals, 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    }
    const uint c = (vkc_epilogue_form_ & 4u) != 0u
                       ? atomicAdd(d.n, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                   gl_SemanticsAcquireRelease) + 1u
                       : atomicAdd(d.n, 1u) + 1u;
    vkc_epilogue_host_ h = vkc_epilogue_host_(uvec2(vkc_epilogue_host_lo_, vkc_epilogue_host_hi_));
    if ((vkc_epilogue_form_ & 2u) != 0u)
        atomicExchange(h.count, c);
    else
        h.count = c;
}
