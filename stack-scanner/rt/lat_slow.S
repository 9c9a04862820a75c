/* lat_slow.S - __vprof_lat_enter_slow, called by instrumented code with the
 * preserve_most convention (LLVM): it must keep every general register but
 * rax and r11, so it saves the argument registers around the C slow path
 * (vl_enter_slow in lat_registry.c). Vector registers are the caller's
 * business under preserve_most. */
    .text
    .globl  __vprof_lat_enter_slow
    .type   __vprof_lat_enter_slow, @function
    .p2align 4
__vprof_lat_enter_slow:
    .cfi_startproc
    pushq   %rcx
    .cfi_adjust_cfa_offset 8
    pushq   %rdx
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %r8
    .cfi_adjust_cfa_offset 8
    pushq   %r9
    .cfi_adjust_cfa_offset 8
    pushq   %r10
    .cfi_adjust_cfa_offset 8
    /* 7 pushes + return address: %rsp is 16-byte aligned for the call */
    call    vl_enter_slow
    popq    %r10
    .cfi_adjust_cfa_offset -8
    popq    %r9
    .cfi_adjust_cfa_offset -8
    popq    %r8
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdx
    .cfi_adjust_cfa_offset -8
    popq    %rcx
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size   __vprof_lat_enter_slow, .-__vprof_lat_enter_slow
    .section .note.GNU-stack,"",@progbits
