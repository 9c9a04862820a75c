/* lat_shim_unwind.c - keeps the frame chain exact when control leaves
 * instrumented frames without running their exits:
 *  - longjmp, _longjmp, siglongjmp, __longjmp_chk: before jumping, unlink
 *    every record below the target stack pointer (read from the jmp_buf,
 *    where glibc stores it mangled with the pointer guard);
 *  - __cxa_begin_catch: when a C++ handler starts, every record below the
 *    current frame belongs to a frame the exception unwound.
 * Without these the chain would keep pointing at dead frames until the next
 * instrumented call repairs it (lat_registry.c), and uninstrumented code
 * could meanwhile overwrite those records under the scanner's eyes. */
#include <dlfcn.h>
#include <setjmp.h>

#include "lat_rt.h"

VL_HIDDEN int vl_safe_read(void *dst, const void *src, size_t n);

/* glibc x86-64: PTR_MANGLE = xor with the guard at %fs:0x30, rotate left 17. */
static uintptr_t demangle(uintptr_t v)
{
    uintptr_t guard;
    __asm__("mov %%fs:0x30, %0" : "=r"(guard));
    v = (v >> 17) | (v << (64 - 17));
    return v ^ guard;
}

/* Unlinks the records that lie below sp (their frames are gone or going).
 * Not checked by AddressSanitizer: it reads records in frames being
 * abandoned. */
__attribute__((no_sanitize_address))
static void unlink_below(uintptr_t sp)
{
    struct vl_tls *t = &__vprof_lat_tls;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t top = (uintptr_t)t->top;
    /* A target below us or absurdly far above is not a stack pointer we
     * understand: leave the chain to the entry slow path. */
    if (!top || sp < here || sp - here > (1ul << 30))
        return;
    int steps = 0;
    while (top != VL_SENTINEL && top < sp) {
        struct vl_frame f;
        if ((top & 7) || ++steps > 100000) {
            top = VL_SENTINEL;
            break;
        }
        if (top > here) {       /* a live frame between us and the target */
            f = *(volatile struct vl_frame *)top;
        } else if (vl_safe_read(&f, (const void *)top, sizeof f) < 0) {
            top = VL_SENTINEL;  /* already stale before the jump */
            break;
        }
        if ((f.word >> VL_CANARY_SHIFT) != VL_CANARY ||
            ((uintptr_t)f.prev != VL_SENTINEL && (uintptr_t)f.prev <= top)) {
            top = VL_SENTINEL;
            break;
        }
        top = (uintptr_t)f.prev;
    }
    __atomic_store_n(&t->top, (struct vl_frame *)top, __ATOMIC_RELEASE);
}

#define JB_RSP 6   /* glibc sysdeps/x86_64/jmpbuf-offsets.h */

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

#define JUMP_SHIM(name)                                                      \
    static jump_fn real_##name;                                              \
    __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int v) \
    {                                                                        \
        if (__builtin_expect(!real_##name, 0))                               \
            real_##name = (jump_fn)dlsym(RTLD_NEXT, #name);                  \
        unlink_below(demangle((uintptr_t)env[0].__jmpbuf[JB_RSP]));          \
        real_##name(env, v);                                                 \
        __builtin_unreachable();                                             \
    }

JUMP_SHIM(longjmp)
JUMP_SHIM(_longjmp)
JUMP_SHIM(siglongjmp)
JUMP_SHIM(__longjmp_chk)

void *__cxa_begin_catch(void *exc)
{
    static void *(*real)(void *);
    if (__builtin_expect(!real, 0))
        real = (void *(*)(void *))dlsym(RTLD_NEXT, "__cxa_begin_catch");
    unlink_below((uintptr_t)__builtin_frame_address(0));
    return real(exc);
}
