/* vkc_resident.glsl: the device half of a vkc resident kernel.
 *
 * Include it (#include "vkc_resident.glsl") in a compute shader written as a
 * loop:
 *
 *     layout(local_size_x = 1) in;             // one workgroup runs it
 *     layout(set = 0, binding = 1) buffer Data { uint data[]; };
 *     void main() {
 *         vkc_item it;
 *         while (vkc_resident_next(it)) {       // every invocation calls it
 *             uint x = vkc_resident_word(it, 0u);
 *             ...work on it...
 *             vkc_resident_done(it);            // every invocation calls it
 *         }
 *     }                                         // return right after the loop
 *
 * It declares binding 0 of set 0 (the ring: vkc binds it) and the kernel's
 * push-constant block; the kernel's own buffers start at binding 1. Call
 * vkc_resident_next and vkc_resident_done from all invocations, in uniform
 * control flow (they contain barriers). Items come in post order, one at a
 * time; every item must be acknowledged with vkc_resident_done before the
 * next vkc_resident_next.
 *
 * With a grid (vkc_resident_desc.grid > 1) every workgroup gets every item
 * and splits the work by gl_WorkGroupID.x (gl_NumWorkGroups.x of them);
 * the item is acknowledged when the last workgroup calls
 * vkc_resident_done. Deciding which item a launch ends at costs grids one
 * atomic per item and workgroup, and the last one's add one more.
 *
 * vkc_resident_next returns false when the kernel must end: it stayed idle
 * for its idle time, vkc asked it to stop, or (fallback mode) its one item
 * was handled. vkc relaunches it when the next item is posted.
 *
 * Acks in host memory (VKC_RESIDENT_ACK=host) need the kernel built by vkc
 * from GLSL on a context with bufferDeviceAddress: vkc then defines
 * VKC_BUFFER_ADDRESS before this text and the kernel writes its acks
 * through the address in the ring's header. */
#ifndef VKC_RESIDENT_GLSL
#define VKC_RESIDENT_GLSL 1

#extension GL_KHR_memory_scope_semantics : require
/* vkc defines VKC_BUFFER_ADDRESS where the context has bufferDeviceAddress:
 * then the kernel can write its acks to host memory (VKC_RESIDENT_ACK=host). */
#ifdef VKC_BUFFER_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer vkc_ack_ref
{
    uint w[];
};
#endif

/* Word layout shared with src/resident.h (keep in step). */
#define VKC_RH_STATE 0u  /* host: 1 before a launch; kernel: 2 when it ends */
#define VKC_RH_ALIVE 1u  /* kernel: 1 once it polls */
#define VKC_RH_BASE 2u   /* host: the first item a launch takes */
#define VKC_RH_SPINS 3u  /* host: polls without an item before the kernel ends */
#define VKC_RH_STOP 4u   /* host: end once no item is waiting */
#define VKC_RH_SLOTS 5u  /* slots in the ring */
#define VKC_RH_STRIDE 6u /* words per slot */
#define VKC_RH_TAKEN 7u  /* kernel: the last item taken (the next launch starts after it) */
#define VKC_RH_LAUNCH 8u /* host: polls + 16 per item in one launch before it ends; 0: no bound */
#define VKC_RH_PROBE 9u  /* host: 1 for the self-test's launches (every item a probe) */
#define VKC_RH_CLAIM 10u /* grids: (item << 1) | ended, the last item decided (host: base - 1) */
#define VKC_RH_ACK_LO 11u /* host: device address of the acks in host memory; 0: in the ring */
#define VKC_RH_ACK_HI 12u
#define VKC_ACK_STRIDE 16u /* words per slot there */
#define VKC_RH_WORDS 16u /* header words; slots follow */
/* Per slot: item number (the doorbell), acknowledgement, workgroups done
 * with it (grids), payload bytes, then the payload. */
#define VKC_RS_SEQ 0u
#define VKC_RS_ACK 1u
#define VKC_RS_COUNT 2u
#define VKC_RS_SIZE 3u
#define VKC_RS_PAYLOAD 4u

layout(set = 0, binding = 0) coherent buffer vkc_resident_ring
{
    uint vkc_rw[];
};

/* mode 0: resident (poll the ring); 1: one item (the slot in vkc_slot),
 * the fallback's submitted dispatch. */
layout(push_constant) uniform vkc_resident_push
{
    uint vkc_mode;
    uint vkc_slot;
    uint vkc_pad0;
    uint vkc_pad1;
}
vkc_rp;

struct vkc_item {
    uint seq;  /* item number (low 32 bits), from 1 in post order */
    uint base; /* word index of the slot in the ring */
};

shared uint vkc_rs_ok;
shared uint vkc_rs_seq;
shared uint vkc_rs_base;
uint vkc_r_next = 0u;
uint vkc_r_total = 0u;
bool vkc_r_started = false;
/* The header words a launch does not change, read once: on a GPU each
 * load of the ring crosses to memory the host maps (about 0.9 us a load
 * measured on an H200), so a load per item on the way from doorbell to
 * ack costs as much as the item. */
uint vkc_r_slots, vkc_r_stride, vkc_r_spins, vkc_r_launch, vkc_r_probe;
uvec2 vkc_r_ack = uvec2(0u);

uint vkc_resident_slot_base(uint seq)
{
    return VKC_RH_WORDS + (seq % vkc_rw[VKC_RH_SLOTS]) * vkc_rw[VKC_RH_STRIDE];
}

/* Word i of the item's payload (i < payload bytes / 4). */
uint vkc_resident_word(vkc_item it, uint i)
{
    return vkc_rw[it.base + VKC_RS_PAYLOAD + i];
}

/* Bytes the host posted for this item. */
uint vkc_resident_size(vkc_item it)
{
    return vkc_rw[it.base + VKC_RS_SIZE];
}

/* A device address (two words, low first) at payload word i, for
 * GL_EXT_buffer_reference: MyRef(vkc_resident_address(it, i)). */
uvec2 vkc_resident_address(vkc_item it, uint i)
{
    return uvec2(vkc_resident_word(it, i), vkc_resident_word(it, i + 1u));
}

/* Release-store item seq's ack, in its slot (base) or in host memory. */
void vkc_resident_ack_(uint base, uint seq)
{
#ifdef VKC_BUFFER_ADDRESS
    if (vkc_r_ack != uvec2(0u)) {
        vkc_ack_ref acks = vkc_ack_ref(vkc_r_ack);
        uint i = (base - VKC_RH_WORDS) / vkc_r_stride * VKC_ACK_STRIDE;
        atomicStore(acks.w[i], seq, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                    gl_SemanticsRelease);
        return;
    }
#endif
    atomicStore(vkc_rw[base + VKC_RS_ACK], seq, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                gl_SemanticsRelease);
}

/* Grids: every workgroup takes every item, and all must end a launch at
 * the same item or one would do an item the others skip (and a relaunch
 * would do it twice). The first workgroup to decide item n (take it: it saw
 * the doorbell; or end before it: its idle time ran out) wins a compare-
 * and-swap on the claim word; the others follow. Returns true when n is
 * taken. The claim word only moves forward within a launch, and a
 * workgroup at n has seen n - 1 decided: a failed swap returns n's decision
 * or a later item's (n was taken). No loop: lavapipe's loop limit misbehaves
 * with one nested in the poll loop. */
bool vkc_resident_claim_(uint n, bool end)
{
    uint t = atomicLoad(vkc_rw[VKC_RH_CLAIM], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                        gl_SemanticsRelaxed);
    if (int((t & ~1u) - (n << 1)) < 0) {
        uint want = (n << 1) | (end ? 1u : 0u);
        uint old = atomicCompSwap(vkc_rw[VKC_RH_CLAIM], t, want, gl_ScopeDevice,
                                  gl_StorageSemanticsBuffer, gl_SemanticsRelaxed,
                                  gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
        if (old == t)
            return !end;
        t = old;
    }
    return int((t & ~1u) - (n << 1)) > 0 || (t & 1u) == 0u;
}

/* Invocation 0 polls; the others wait at the barrier. Between seeing the
 * doorbell and handing the item over (one workgroup): one acquire fence
 * and one relaxed store, no load. */
void vkc_resident_poll_()
{
    if (!vkc_r_started) {
        vkc_r_started = true;
        vkc_r_next = atomicLoad(vkc_rw[VKC_RH_BASE], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                gl_SemanticsAcquire);
        vkc_r_slots = vkc_rw[VKC_RH_SLOTS];
        vkc_r_stride = vkc_rw[VKC_RH_STRIDE];
        vkc_r_spins = vkc_rw[VKC_RH_SPINS];
        vkc_r_launch = vkc_rw[VKC_RH_LAUNCH];
        vkc_r_probe = vkc_rw[VKC_RH_PROBE];
        uint alive = 1u;
#ifdef VKC_BUFFER_ADDRESS
        vkc_r_ack = uvec2(vkc_rw[VKC_RH_ACK_LO], vkc_rw[VKC_RH_ACK_HI]);
        /* Tells the self-test this kernel writes its acks there. */
        if (vkc_r_ack != uvec2(0u))
            alive = 3u;
#endif
        if (gl_WorkGroupID.x == 0u)
            atomicStore(vkc_rw[VKC_RH_ALIVE], alive, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                        gl_SemanticsRelease);
    }
    bool grid = gl_NumWorkGroups.x > 1u;
    /* The self-test's probes are workgroup 0's alone. */
    if (vkc_r_probe != 0u && gl_WorkGroupID.x != 0u) {
        vkc_rs_ok = 0u;
        return;
    }
    uint budget = vkc_r_spins;
    /* Some drivers end all loops of an invocation after a fixed iteration
     * count (lavapipe: 65535 in all, shared by nested loops): the launch
     * bound ends the kernel here, between items, before that happens. */
    if (vkc_r_launch != 0u) {
        vkc_r_total += 16u;
        budget = vkc_r_total >= vkc_r_launch ? 0u : min(budget, vkc_r_launch - vkc_r_total);
    }
    uint base = VKC_RH_WORDS + (vkc_r_next % vkc_r_slots) * vkc_r_stride;
    uint spins = 0u;
    uint got = 0u;
    /* Another workgroup took the item: take it too once its doorbell shows. */
    bool must = false;
    /* No poll at all once the bound is reached: an item taken past it
     * could meet the driver's loop limit half done. */
    bool polling = true;
    if (budget == 0u) {
        if (!grid || !vkc_resident_claim_(vkc_r_next, true))
            polling = false;
        else
            must = true;
    }
    for (; polling;) {
        uint s = atomicLoad(vkc_rw[base + VKC_RS_SEQ], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                            gl_SemanticsRelaxed);
        if (s == vkc_r_next) {
            /* Acquire: the payload the host wrote before the doorbell. */
            memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
            if (vkc_r_probe != 0u) {
                /* The self-test's probe: answer with the polls it took.
                 * Recorded as taken like any item: a relaunch starts after
                 * it even when its ack was not seen. */
                atomicStore(vkc_rw[VKC_RH_TAKEN], s, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                            gl_SemanticsRelaxed);
                vkc_rw[base + VKC_RS_PAYLOAD] = spins;
                /* In host memory first, then in the ring too: the host
                 * times the first from the second. */
                if (vkc_r_ack != uvec2(0u))
                    vkc_resident_ack_(base, s);
                atomicStore(vkc_rw[base + VKC_RS_ACK], s, gl_ScopeDevice,
                            gl_StorageSemanticsBuffer, gl_SemanticsRelease);
                vkc_r_next++;
                base = VKC_RH_WORDS + (vkc_r_next % vkc_r_slots) * vkc_r_stride;
                spins = 0u;
                continue;
            }
            got = (must || !grid || vkc_resident_claim_(s, false)) ? 1u : 0u;
            /* Relaxed: the host reads it only after the launch's fence. */
            if (got != 0u)
                atomicStore(vkc_rw[VKC_RH_TAKEN], s, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                            gl_SemanticsRelaxed);
            break;
        }
        if (must)
            continue;
        bool end = false;
        if ((spins & 63u) == 63u &&
            atomicLoad(vkc_rw[VKC_RH_STOP], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                       gl_SemanticsRelaxed) != 0u)
            end = true;
        if (++spins >= budget)
            end = true;
        if (end) {
            if (!grid || !vkc_resident_claim_(vkc_r_next, true))
                break;
            must = true;
        }
    }
    vkc_r_total += spins;
    if (got == 0u && gl_WorkGroupID.x == 0u)
        atomicStore(vkc_rw[VKC_RH_STATE], 2u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                    gl_SemanticsRelease);
    vkc_rs_ok = got;
    vkc_rs_seq = vkc_r_next;
    vkc_rs_base = base;
    if (got != 0u)
        vkc_r_next++;
}

/* Wait for the next item; false: return from main now. */
bool vkc_resident_next(out vkc_item it)
{
    if (vkc_rp.vkc_mode == 1u) {
        /* Fallback: one submitted dispatch per item. */
        if (vkc_r_started)
            return false;
        vkc_r_started = true;
        it.base = VKC_RH_WORDS + vkc_rp.vkc_slot * vkc_rw[VKC_RH_STRIDE];
        it.seq = vkc_rw[it.base + VKC_RS_SEQ];
        return true;
    }
    if (gl_LocalInvocationIndex == 0u)
        vkc_resident_poll_();
    /* Workgroup scope is enough: invocation 0's acquire (device scope)
     * happens-before this barrier, and a device-scope fence here would cost
     * a full memory fence per item. */
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    it.seq = vkc_rs_seq;
    it.base = vkc_rs_base;
    bool ok = vkc_rs_ok != 0u;
    /* No invocation may see the next poll's shared values before all read
     * these. */
    barrier();
    return ok;
}

/* Publish the item's results (every invocation's writes), then its
 * acknowledgement, which the host's wait spins on. In a grid the last
 * workgroup to finish the item acknowledges it. */
void vkc_resident_done(vkc_item it)
{
    /* Every invocation's writes happen-before invocation 0's release, which
     * makes them available at device scope with the ack. */
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    if (gl_LocalInvocationIndex == 0u) {
        bool last = true;
        uint groups = gl_NumWorkGroups.x;
        if (groups > 1u && vkc_rp.vkc_mode == 0u) {
            /* Acquire-release: the other workgroups' writes, released by
             * their adds, are ordered before the last one's ack. */
            uint before = atomicAdd(vkc_rw[it.base + VKC_RS_COUNT], 1u, gl_ScopeDevice,
                                    gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
            last = before + 1u == groups;
            /* The slot's next item comes after the ack, so after this. */
            if (last)
                atomicStore(vkc_rw[it.base + VKC_RS_COUNT], 0u, gl_ScopeDevice,
                            gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
        }
        if (last && vkc_rp.vkc_mode == 0u)
            vkc_resident_ack_(it.base, it.seq);
        else if (last)
            atomicStore(vkc_rw[it.base + VKC_RS_ACK], it.seq, gl_ScopeDevice,
                        gl_StorageSemanticsBuffer, gl_SemanticsRelease);
    }
}

#endif
