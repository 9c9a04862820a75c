/* mcount.S - the -pg entry hooks, as glibc's sysdeps/x86_64/_mcount.S.
 *
 * gcc -pg calls mcount after the prologue has set up %rbp: selfpc is our
 * return address (inside the profiled function), frompc is that function's
 * own return address at 8(%rbp). With -mfentry, __fentry__ is called before
 * the prologue: selfpc is our return address, frompc the word above it.
 * Every register that can carry an argument is preserved (the C recorder
 * uses general registers only, so the SSE argument registers are safe). */

/* One trampoline body; FROMPC is where the caller's return address is. */
.macro VPROF_HOOK_BODY frompc
	.cfi_startproc
	subq	$72, %rsp		/* 8 saves + 8 to keep %rsp 16-aligned */
	.cfi_adjust_cfa_offset 72
	movq	%rax, 0(%rsp)
	movq	%rcx, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rsi, 24(%rsp)
	movq	%rdi, 32(%rsp)
	movq	%r8, 40(%rsp)
	movq	%r9, 48(%rsp)
	movq	%r10, 56(%rsp)
	movq	72(%rsp), %rsi		/* selfpc */
	movq	\frompc, %rdi		/* frompc */
	call	vprof_mcount_internal
	movq	0(%rsp), %rax
	movq	8(%rsp), %rcx
	movq	16(%rsp), %rdx
	movq	24(%rsp), %rsi
	movq	32(%rsp), %rdi
	movq	40(%rsp), %r8
	movq	48(%rsp), %r9
	movq	56(%rsp), %r10
	addq	$72, %rsp
	.cfi_adjust_cfa_offset -72
	ret
	.cfi_endproc
.endm

	.text
	.p2align 4
	.globl	mcount
	.type	mcount, @function
	.globl	_mcount
	.type	_mcount, @function
mcount:
_mcount:
	VPROF_HOOK_BODY 8(%rbp)		/* the profiled function's return address */
	.size	mcount, .-mcount
	.size	_mcount, .-_mcount

	.p2align 4
	.globl	__fentry__
	.type	__fentry__, @function
__fentry__:
	VPROF_HOOK_BODY 80(%rsp)	/* the word above our return address */
	.size	__fentry__, .-__fentry__

	.section .note.GNU-stack,"",@progbits
